"""
Sentiment classification on the Stanford Sentiment Treebank (SST-5, the ELMo paper's SST-5
task): the reader "sst_trees" and the "bcn_classifier" model (BCN with ELMo at its input and
its integrator's output).
"""

from elmo_plugin.tasks.sentiment.dataset_readers import SstTreesReader
from elmo_plugin.tasks.sentiment.models import BcnClassifier

__all__ = ["SstTreesReader", "BcnClassifier"]
