"""
The two ways SRL tags label arguments, each one object that the readers and the "deep_srl"
model share: `"span"` (BIO tags over each argument's words) and `"head"` (the role on each
argument's head word, CoNLL-2009 style). A mode gives the tags a reader makes, its label
namespace, the tag the vocabulary must hold, the decoding and the metric.
"""

from abc import ABC, abstractmethod
from typing import Dict, List, Optional, Tuple

import torch
from allennlp.data import Vocabulary
from allennlp.nn.util import viterbi_decode
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.srl.bio_transitions import bio_transition_constraints
from elmo_plugin.allennlp.tasks.srl.dependency_spans import head_labels_to_bio, head_labels_to_tags
from elmo_plugin.allennlp.tasks.srl.metrics.decoded_tags_f1 import (
    DecodedHeadF1,
    DecodedSpanF1,
    DecodedTagsF1,
)
from elmo_plugin.allennlp.tasks.srl.tags import PREDICATE_TAG


class LabelMode(ABC):
    """
    One SRL label mode. Stateless: one instance per mode (`SPAN_LABELS`, `HEAD_LABELS`, and
    by name in `LABEL_MODES`); a config's name becomes one with `label_mode(name)`.
    """

    name: str
    # The predicate's tag: its presence in a vocabulary namespace tells the mode that made it.
    predicate_tag: str

    def namespace(self, label_namespace: Optional[str] = None) -> str:
        """The label namespace: `label_namespace` if given, else `"<mode>_labels"`, one per
        mode, so a config can reserve the tags of both and switch modes with `label_mode`
        alone."""
        return label_namespace or f"{self.name}_labels"

    def check_vocabulary(self, vocab: Vocabulary, label_namespace: str) -> None:
        """A `ConfigurationError` unless the namespace holds this mode's predicate tag."""
        tags = vocab.get_token_to_index_vocabulary(label_namespace)
        if self.predicate_tag not in tags:
            raise ConfigurationError(
                f"label_mode {self.name!r} expects the tag {self.predicate_tag!r} in the "
                f"{label_namespace!r} vocabulary, which has {sorted(tags)[:10]}...: give the "
                "dataset reader and the model the same label_mode"
            )

    def check_instances(self, instances_label_mode: Optional[str]) -> None:
        """A `ConfigurationError` unless instances made in `instances_label_mode` (their
        metadata's "label_mode"; `None` when unknown) fit this mode."""
        # Both modes' tags can be in the vocabulary, so a mismatch would otherwise go unseen.
        if instances_label_mode not in (None, self.name):
            raise ConfigurationError(
                f"the model has label_mode {self.name!r} but the dataset reader made "
                f"{instances_label_mode!r} tags: give both the same label_mode"
            )

    @abstractmethod
    def tags(self, heads: List[int], predicate_index: int, labels: List[str]) -> List[str]:
        """
        One predicate's tags from a dependency-based argument column: `heads` as
        `dependency_spans.dependency_subtrees` takes them, `labels` the role on each argument
        head, "V" on the predicate, "_" elsewhere.
        """

    @abstractmethod
    def transition_constraints(self, labels: Dict[int, str]) -> Tuple[torch.Tensor, torch.Tensor]:
        """The `(num_tags, num_tags)` transition and `(num_tags,)` start scores that `decode`
        takes, for the tags `labels` (index to tag)."""

    @abstractmethod
    def decode(
        self, log_probabilities: torch.Tensor, transitions: torch.Tensor, start: torch.Tensor
    ) -> List[int]:
        """The tag ids of one sequence from its `(length, num_tags)` log-probabilities."""

    @abstractmethod
    def metric(self, vocab: Vocabulary, label_namespace: str) -> DecodedTagsF1:
        """A fresh metric of decoded tags; its overall names are the same in both modes."""


class SpanLabels(LabelMode):
    """
    BIO tags over each argument's words (`B-V` on the predicate); decoding is Viterbi with
    hard BIO constraints (no `I-X` after anything but `B-X`/`I-X`); the metric is span F1.
    """

    name = "span"
    predicate_tag = "B-" + PREDICATE_TAG

    @overrides
    def tags(self, heads: List[int], predicate_index: int, labels: List[str]) -> List[str]:
        return head_labels_to_bio(heads, predicate_index, labels)

    @overrides
    def transition_constraints(self, labels: Dict[int, str]) -> Tuple[torch.Tensor, torch.Tensor]:
        return bio_transition_constraints(labels)

    @overrides
    def decode(
        self, log_probabilities: torch.Tensor, transitions: torch.Tensor, start: torch.Tensor
    ) -> List[int]:
        return viterbi_decode(log_probabilities, transitions, allowed_start_transitions=start)[0]

    @overrides
    def metric(self, vocab: Vocabulary, label_namespace: str) -> DecodedTagsF1:
        return DecodedSpanF1(vocab, label_namespace)


class HeadLabels(LabelMode):
    """
    The role on each argument's head word (`V` on the predicate); any tag may follow any
    other, so decoding is the per-token argmax (the transition scores are all zero); the
    metric is (predicate, head, role) F1.
    """

    name = "head"
    predicate_tag = PREDICATE_TAG

    @overrides
    def tags(self, heads: List[int], predicate_index: int, labels: List[str]) -> List[str]:
        return head_labels_to_tags(predicate_index, labels)

    @overrides
    def transition_constraints(self, labels: Dict[int, str]) -> Tuple[torch.Tensor, torch.Tensor]:
        return torch.zeros(len(labels), len(labels)), torch.zeros(len(labels))

    @overrides
    def decode(
        self, log_probabilities: torch.Tensor, transitions: torch.Tensor, start: torch.Tensor
    ) -> List[int]:
        return log_probabilities.argmax(dim=-1).tolist()

    @overrides
    def metric(self, vocab: Vocabulary, label_namespace: str) -> DecodedTagsF1:
        return DecodedHeadF1(vocab, label_namespace)


SPAN_LABELS = SpanLabels()
HEAD_LABELS = HeadLabels()
LABEL_MODES: Dict[str, LabelMode] = {mode.name: mode for mode in (SPAN_LABELS, HEAD_LABELS)}


def label_mode(name: str) -> LabelMode:
    """The label mode called `name`; a `ConfigurationError` naming the modes for another."""
    if name not in LABEL_MODES:
        raise ConfigurationError(f"label_mode must be one of {tuple(LABEL_MODES)}, found {name!r}")
    return LABEL_MODES[name]
