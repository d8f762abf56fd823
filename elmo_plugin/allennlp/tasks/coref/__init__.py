"""
Coreference resolution on LitBank (standing in for the ELMo paper's CoNLL-2012 task): the
reader "litbank_coref", the "span_ranking_coref" model (Lee et al. 2017's end-to-end span
ranking, with ELMo at its input), the "conll2012_coref_scores" and "coref_mention_recall"
metrics and the "coref_clusters" predictor.
"""

from elmo_plugin.allennlp.tasks.coref.dataset_readers import LitbankCorefReader
from elmo_plugin.allennlp.tasks.coref.metrics import Conll2012CorefScores, CorefMentionRecall
from elmo_plugin.allennlp.tasks.coref.models import SpanRankingCoref
from elmo_plugin.allennlp.tasks.coref.predictors import CorefClustersPredictor

__all__ = [
    "LitbankCorefReader",
    "Conll2012CorefScores",
    "CorefMentionRecall",
    "SpanRankingCoref",
    "CorefClustersPredictor",
]
