from elmo_plugin.tasks.sentiment.dataset_readers.sst_trees import SstTreesReader

__all__ = ["SstTreesReader"]
