"""
Sentiment classification on the Stanford Sentiment Treebank (SST-5, the ELMo paper's SST-5
task): the reader "sst_trees", the "bcn_classifier" model (BCN with ELMo at its input and
its integrator's output) and the "sentence_sentiment" predictor.
"""

from elmo_plugin.allennlp.tasks.sentiment.dataset_readers import SstTreesReader
from elmo_plugin.allennlp.tasks.sentiment.models import BcnClassifier
from elmo_plugin.allennlp.tasks.sentiment.predictors import SentenceSentimentPredictor

__all__ = ["SstTreesReader", "BcnClassifier", "SentenceSentimentPredictor"]
