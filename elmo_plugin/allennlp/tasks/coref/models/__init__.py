from elmo_plugin.allennlp.tasks.coref.models.span_ranking_coref import SpanRankingCoref

__all__ = ["SpanRankingCoref"]
