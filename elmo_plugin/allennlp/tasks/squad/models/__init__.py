from elmo_plugin.allennlp.tasks.squad.models.bidaf_rc import BidafRc
from elmo_plugin.allennlp.tasks.squad.models.span_decoding import best_span

__all__ = ["BidafRc", "best_span"]
