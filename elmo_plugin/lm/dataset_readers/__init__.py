from elmo_plugin.lm.dataset_readers.bilm_corpus import BilmCorpusReader

__all__ = ["BilmCorpusReader"]
