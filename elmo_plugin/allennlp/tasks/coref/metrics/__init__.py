from elmo_plugin.allennlp.tasks.coref.metrics.conll2012_coref_scores import Conll2012CorefScores
from elmo_plugin.allennlp.tasks.coref.metrics.mention_recall import CorefMentionRecall

__all__ = ["Conll2012CorefScores", "CorefMentionRecall"]
