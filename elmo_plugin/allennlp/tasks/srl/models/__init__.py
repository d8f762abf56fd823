from elmo_plugin.allennlp.tasks.srl.models.deep_srl import DeepSrl

__all__ = ["DeepSrl"]
