from elmo_plugin.allennlp.tasks.snli.models.esim_nli import EsimNli

__all__ = ["EsimNli"]
