from typing import Dict, List

from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric
from overrides import overrides

from elmo_plugin.allennlp.tasks.squad.metrics.answer_scores import (
    exact_match_score,
    f1_score,
    max_over_references,
)


@Metric.register("squad_v1_em_f1")
class SquadV1EmF1(Metric):
    """
    Exact match and F1 of predicted answer strings, as the official SQuAD v1.1 script computes
    them: each prediction scores its best over the reference answers, and both are averaged
    over questions (as fractions in [0, 1], not percentages).

    AllenNLP core has no SQuAD metric. allennlp-models' `squad` metric (`SquadEmAndF1`) is not
    ours to import (allennlp-models is not a runtime dependency: `docs/install.md`), and differs:
    it scores with the SQuAD 2.0 script (two answers that normalise to nothing get F1 1 there,
    0 in the v1.1 script), its `get_metric` returns an `(em, f1)` tuple rather than a dict,
    and it reduces across workers on every call rather than once in `get_metric`.

    Registered as a `Metric` with name "squad_v1_em_f1".
    """

    supports_distributed = True

    def __init__(self) -> None:
        self._total_em = 0.0
        self._total_f1 = 0.0
        self._count = 0

    # AllenNLP's `Metric.__call__` takes (predictions, gold_labels, mask) tensors; this one takes
    # answer strings: the override cannot match its signature.
    @overrides
    def __call__(  # type: ignore[override]
        self, predictions: List[str], references: List[List[str]]
    ) -> None:
        """
        # Parameters

        predictions : `List[str]`
            One predicted answer per question.
        references : `List[List[str]]`
            The reference answers of each question (at least one each).
        """
        if len(predictions) != len(references):
            raise ValueError(
                f"got {len(predictions)} predictions for {len(references)} reference lists"
            )
        for prediction, answers in zip(predictions, references):
            if not answers:
                raise ValueError(f"no reference answers for the prediction {prediction!r}")
            self._total_em += max_over_references(exact_match_score, prediction, answers)
            self._total_f1 += max_over_references(f1_score, prediction, answers)
            self._count += 1

    @overrides
    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        count = dist_reduce_sum(self._count)
        em = dist_reduce_sum(self._total_em) / count if count else 0.0
        f1 = dist_reduce_sum(self._total_f1) / count if count else 0.0
        if reset:
            self.reset()
        return {"em": em, "f1": f1}

    @overrides
    def reset(self) -> None:
        self._total_em = 0.0
        self._total_f1 = 0.0
        self._count = 0
