from elmo_plugin.tasks.sentiment.predictors.sentence_sentiment import SentenceSentimentPredictor

__all__ = ["SentenceSentimentPredictor"]
