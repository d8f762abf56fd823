from elmo_plugin.allennlp.tasks.sentiment.dataset_readers.sst_trees import SstTreesReader

__all__ = ["SstTreesReader"]
