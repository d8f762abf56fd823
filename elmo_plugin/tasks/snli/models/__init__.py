from elmo_plugin.tasks.snli.models.esim_nli import EsimNli

__all__ = ["EsimNli"]
