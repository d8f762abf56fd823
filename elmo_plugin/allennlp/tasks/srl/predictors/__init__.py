from elmo_plugin.allennlp.tasks.srl.predictors.deep_srl import DeepSrlPredictor

__all__ = ["DeepSrlPredictor"]
