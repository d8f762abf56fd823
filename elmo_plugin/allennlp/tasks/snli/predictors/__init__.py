from elmo_plugin.allennlp.tasks.snli.predictors.nli_pair import NliPairPredictor

__all__ = ["NliPairPredictor"]
