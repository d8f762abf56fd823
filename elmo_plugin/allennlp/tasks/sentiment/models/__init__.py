from elmo_plugin.allennlp.tasks.sentiment.models.bcn_classifier import BcnClassifier

__all__ = ["BcnClassifier"]
