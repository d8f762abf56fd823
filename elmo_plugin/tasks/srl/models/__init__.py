from elmo_plugin.tasks.srl.models.deep_srl import DeepSrl

__all__ = ["DeepSrl"]
