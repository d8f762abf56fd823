from elmo_plugin.allennlp.tasks.squad.predictors.squad_answer import SquadAnswerPredictor

__all__ = ["SquadAnswerPredictor"]
