from elmo_plugin.allennlp.tasks.coref.dataset_readers.litbank_coref import LitbankCorefReader

__all__ = ["LitbankCorefReader"]
