"""
Sentiment classification on the Stanford Sentiment Treebank (SST-5, the ELMo paper's SST-5
task): the reader "sst_trees".
"""

from elmo_plugin.tasks.sentiment.dataset_readers import SstTreesReader

__all__ = ["SstTreesReader"]
