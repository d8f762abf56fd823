"""
The F1 metric of each SRL label mode, called the same way in both: with the model's
decoded tag ids and its batch tensors. Not registered: a label mode builds its own (see
`elmo_plugin.allennlp.tasks.srl.label_modes`).
"""

from typing import Dict, List, Protocol

import torch
from allennlp.data import Vocabulary
from allennlp.training.metrics import SpanBasedF1Measure
from overrides import overrides

from elmo_plugin.allennlp.tasks.decoded_paths import decoded_paths_to_one_hot
from elmo_plugin.allennlp.tasks.srl.metrics.dependency_srl_f1 import DependencySrlF1
from elmo_plugin.allennlp.tasks.srl.tags import PREDICATE_TAGS


class DecodedTagsF1(Protocol):
    """What "deep_srl" needs of its metric, whatever the label mode."""

    def __call__(
        self,
        predicted_tag_ids: List[List[int]],
        class_probabilities: torch.Tensor,
        gold_tags: torch.Tensor,
        mask: torch.BoolTensor,
        predicate_indicator: torch.Tensor,
    ) -> None:
        """
        # Parameters

        predicted_tag_ids : `List[List[int]]`
            The decoded tag ids of each instance, as long as its sentence.
        class_probabilities : `torch.Tensor`
            `(batch_size, num_tokens, num_tags)`.
        gold_tags : `torch.Tensor`
            `(batch_size, num_tokens)` gold tag ids.
        mask : `torch.BoolTensor`
            `(batch_size, num_tokens)`.
        predicate_indicator : `torch.Tensor`
            `(batch_size, num_tokens)`, 1 on the predicate.
        """

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        """`precision-overall`, `recall-overall` and `f1-measure-overall`."""


class DecodedSpanF1(SpanBasedF1Measure):
    """
    Span precision, recall and F1 of decoded BIO tags (the constrained decode, not the
    per-token argmax), overall only; the predicate's spans are not scored.

    # Parameters

    vocab : `Vocabulary`
    label_namespace : `str`
    """

    def __init__(self, vocab: Vocabulary, label_namespace: str) -> None:
        super().__init__(vocab, label_namespace, ignore_classes=list(PREDICATE_TAGS))

    @overrides(check_signature=False)
    def __call__(
        self,
        predicted_tag_ids: List[List[int]],
        class_probabilities: torch.Tensor,
        gold_tags: torch.Tensor,
        mask: torch.BoolTensor,
        predicate_indicator: torch.Tensor,
    ) -> None:
        one_hot = decoded_paths_to_one_hot(predicted_tag_ids, class_probabilities)
        super().__call__(one_hot, gold_tags, mask)

    @overrides
    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        metrics = super().get_metric(reset=reset)
        return {name: value for name, value in metrics.items() if "overall" in name}


class DecodedHeadF1(DependencySrlF1):
    """
    CoNLL-2009-style (predicate, head, role) precision, recall and F1 of decoded head tags;
    the predicate's own tags are not scored.

    # Parameters

    vocab : `Vocabulary`
    label_namespace : `str`
    """

    def __init__(self, vocab: Vocabulary, label_namespace: str) -> None:
        super().__init__(ignore_classes=list(PREDICATE_TAGS))
        self._vocab = vocab
        self._label_namespace = label_namespace

    @overrides(check_signature=False)
    def __call__(
        self,
        predicted_tag_ids: List[List[int]],
        class_probabilities: torch.Tensor,
        gold_tags: torch.Tensor,
        mask: torch.BoolTensor,
        predicate_indicator: torch.Tensor,
    ) -> None:
        lengths = mask.sum(dim=-1).tolist()
        super().__call__(
            [self._tag_strings(ids) for ids in predicted_tag_ids],
            [self._tag_strings(ids[:length].tolist()) for ids, length in zip(gold_tags, lengths)],
            predicate_indicator.argmax(dim=-1).tolist(),
        )

    def _tag_strings(self, tag_ids: List[int]) -> List[str]:
        return [self._vocab.get_token_from_index(i, self._label_namespace) for i in tag_ids]
