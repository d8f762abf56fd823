from elmo_plugin.tasks.coref.predictors.coref_clusters import CorefClustersPredictor

__all__ = ["CorefClustersPredictor"]
