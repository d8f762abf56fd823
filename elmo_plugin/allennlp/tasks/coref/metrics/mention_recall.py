from typing import Dict, Hashable, Sequence

from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric
from overrides import overrides


@Metric.register("coref_mention_recall")
class CorefMentionRecall(Metric):
    """
    The fraction of gold mentions among the spans a coreference model keeps after pruning
    (its candidates for antecedent scoring): how much the mention scorer lets through, the
    upper bound of what the antecedent scorer can link.

    allennlp-models' `mention_recall` counts the same; ours takes the kept spans and the gold
    clusters as Python values (not the model's tensors and metadata), and reduces across
    workers once, in `get_metric`.

    Registered as a `Metric` with name "coref_mention_recall".
    """

    supports_distributed = True

    def __init__(self) -> None:
        self._gold = 0
        self._recalled = 0

    # AllenNLP's `Metric.__call__` takes (predictions, gold_labels, mask) tensors; this one
    # takes spans and clusters: the override cannot match its signature.
    @overrides
    def __call__(  # type: ignore[override]
        self,
        kept_spans: Sequence[Sequence[Hashable]],
        gold_clusters: Sequence[Sequence[Sequence[Hashable]]],
    ) -> None:
        """
        # Parameters

        kept_spans : `Sequence[Sequence[Hashable]]`
            For each document, the spans kept (e.g. `(start, end)` tuples).
        gold_clusters : `Sequence[Sequence[Sequence[Hashable]]]`
            For each document, its gold clusters of mentions.
        """
        if len(kept_spans) != len(gold_clusters):
            raise ValueError(
                f"got kept spans of {len(kept_spans)} documents and gold clusters of "
                f"{len(gold_clusters)}"
            )
        for spans, clusters in zip(kept_spans, gold_clusters):
            gold = {mention for cluster in clusters for mention in cluster}
            self._gold += len(gold)
            self._recalled += len(gold & set(spans))

    @overrides
    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        gold = dist_reduce_sum(self._gold)
        recall = dist_reduce_sum(self._recalled) / gold if gold else 0.0
        if reset:
            self.reset()
        return {"mention_recall": float(recall)}

    @overrides
    def reset(self) -> None:
        self._gold = 0
        self._recalled = 0
