from elmo_plugin.allennlp.tasks.coref.predictors.coref_clusters import CorefClustersPredictor

__all__ = ["CorefClustersPredictor"]
