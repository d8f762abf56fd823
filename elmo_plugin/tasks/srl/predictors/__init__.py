from elmo_plugin.tasks.srl.predictors.deep_srl import DeepSrlPredictor
