from elmo_plugin.allennlp.tasks.sentiment.predictors.sentence_sentiment import (
    SentenceSentimentPredictor,
)

__all__ = ["SentenceSentimentPredictor"]
