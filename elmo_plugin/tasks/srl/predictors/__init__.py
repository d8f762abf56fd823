from elmo_plugin.tasks.srl.predictors.deep_srl import DeepSrlPredictor

__all__ = ["DeepSrlPredictor"]
