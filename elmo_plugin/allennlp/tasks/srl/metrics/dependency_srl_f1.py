from typing import Dict, List, Optional, Set, Tuple

from allennlp.training.metrics.metric import Metric
from overrides import overrides

from elmo_plugin.allennlp.tasks.srl.tags import OUTSIDE_TAG, PREDICATE_TAG


@Metric.register("dependency_srl_f1")
class DependencySrlF1(Metric):
    """
    CoNLL-2009-style labelled precision, recall and F1 of dependency-based SRL: each
    (predicate, argument head, role) triple counts once, and a predicted triple is correct
    when the gold has the same triple. Predicate senses are not scored (the predicates are
    given, not predicted).

    Each call takes, per predicate, a tag for every token of its sentence: the role on
    argument heads, `O` elsewhere, and classes in `ignore_classes` (the predicate's own `V`)
    are not arguments. The metric names match `SpanBasedF1Measure`'s overall ones.

    Registered as a `Metric` with name "dependency_srl_f1".

    # Parameters

    ignore_classes : `List[str]`, optional (default = `["V"]`)
    """

    def __init__(self, ignore_classes: Optional[List[str]] = None) -> None:
        default = [PREDICATE_TAG]
        self._ignore_classes = set(ignore_classes if ignore_classes is not None else default)
        self._true_positives = 0
        self._num_predicted = 0
        self._num_gold = 0

    # AllenNLP's `Metric.__call__` takes (predictions, gold_labels, mask) tensors; this one takes
    # tag strings and predicate indices: the override cannot match its signature.
    @overrides
    def __call__(  # type: ignore[override]
        self,
        predicted_tags: List[List[str]],
        gold_tags: List[List[str]],
        predicate_indices: List[int],
    ) -> None:
        """
        # Parameters

        predicted_tags : `List[List[str]]`
            One tag sequence per predicate.
        gold_tags : `List[List[str]]`
        predicate_indices : `List[int]`
            The predicate's token index in each sequence.
        """
        if not len(predicted_tags) == len(gold_tags) == len(predicate_indices):
            raise ValueError(
                f"got {len(predicted_tags)} predicted, {len(gold_tags)} gold tag sequences "
                f"and {len(predicate_indices)} predicate indices; expected one of each per "
                "predicate"
            )
        for predicted, gold, predicate in zip(predicted_tags, gold_tags, predicate_indices):
            if len(predicted) != len(gold):
                raise ValueError(
                    f"predicted and gold tags differ in length: {len(predicted)} != {len(gold)}"
                )
            predicted_triples = self._triples(predicate, predicted)
            gold_triples = self._triples(predicate, gold)
            self._true_positives += len(predicted_triples & gold_triples)
            self._num_predicted += len(predicted_triples)
            self._num_gold += len(gold_triples)

    def _triples(self, predicate: int, tags: List[str]) -> Set[Tuple[int, int, str]]:
        return {
            (predicate, token, tag)
            for token, tag in enumerate(tags)
            if tag != OUTSIDE_TAG and tag not in self._ignore_classes
        }

    @overrides
    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        precision = self._true_positives / self._num_predicted if self._num_predicted else 0.0
        recall = self._true_positives / self._num_gold if self._num_gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if reset:
            self.reset()
        return {"precision-overall": precision, "recall-overall": recall, "f1-measure-overall": f1}

    @overrides
    def reset(self) -> None:
        self._true_positives = 0
        self._num_predicted = 0
        self._num_gold = 0
