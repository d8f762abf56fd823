from elmo_plugin.tasks.ner.predictors.conll_ner import ConllNerPredictor

__all__ = ["ConllNerPredictor"]
