from elmo_plugin.tasks.snli.predictors.nli_pair import NliPairPredictor

__all__ = ["NliPairPredictor"]
