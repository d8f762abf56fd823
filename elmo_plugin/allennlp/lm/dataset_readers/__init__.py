from elmo_plugin.allennlp.lm.dataset_readers.bilm_corpus import BilmCorpusReader

__all__ = ["BilmCorpusReader"]
