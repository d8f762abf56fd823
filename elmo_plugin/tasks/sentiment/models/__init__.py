from elmo_plugin.tasks.sentiment.models.bcn_classifier import BcnClassifier

__all__ = ["BcnClassifier"]
