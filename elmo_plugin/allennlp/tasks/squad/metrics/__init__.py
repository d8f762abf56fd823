from elmo_plugin.allennlp.tasks.squad.metrics.squad_v1_em_f1 import SquadV1EmF1

__all__ = ["SquadV1EmF1"]
