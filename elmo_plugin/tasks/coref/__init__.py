"""
Coreference resolution on LitBank (standing in for the ELMo paper's CoNLL-2012 task): the
"conll2012_coref_scores" and "coref_mention_recall" metrics.
"""

from elmo_plugin.tasks.coref.metrics import Conll2012CorefScores, CorefMentionRecall

__all__ = ["Conll2012CorefScores", "CorefMentionRecall"]
