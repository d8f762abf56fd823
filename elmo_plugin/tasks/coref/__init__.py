"""
Coreference resolution on LitBank (standing in for the ELMo paper's CoNLL-2012 task): the
reader "litbank_coref" and the "conll2012_coref_scores" and "coref_mention_recall" metrics.
"""

from elmo_plugin.tasks.coref.dataset_readers import LitbankCorefReader
from elmo_plugin.tasks.coref.metrics import Conll2012CorefScores, CorefMentionRecall

__all__ = ["LitbankCorefReader", "Conll2012CorefScores", "CorefMentionRecall"]
