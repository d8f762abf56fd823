from elmo_plugin.allennlp.tasks.ner.dataset_readers.conll2003_ner import Conll2003NerReader

__all__ = ["Conll2003NerReader"]
