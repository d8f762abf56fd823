from elmo_plugin.allennlp.tasks.ner.predictors.conll_ner import ConllNerPredictor

__all__ = ["ConllNerPredictor"]
