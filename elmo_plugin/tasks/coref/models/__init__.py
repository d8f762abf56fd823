from elmo_plugin.tasks.coref.models.span_ranking_coref import SpanRankingCoref

__all__ = ["SpanRankingCoref"]
