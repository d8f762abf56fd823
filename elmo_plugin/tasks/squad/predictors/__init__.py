from elmo_plugin.tasks.squad.predictors.squad_answer import SquadAnswerPredictor

__all__ = ["SquadAnswerPredictor"]
