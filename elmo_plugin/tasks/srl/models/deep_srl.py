from typing import Any, Dict, List, Optional, Union

import torch
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder, TimeDistributed
from allennlp.nn import InitializerApplicator, RegularizerApplicator
from allennlp.nn.util import (
    get_text_field_mask,
    sequence_cross_entropy_with_logits,
    viterbi_decode,
)
from allennlp.training.metrics import SpanBasedF1Measure
from overrides import overrides

from elmo_plugin.elmo import elmo_layer_weight_metrics
from elmo_plugin.tasks.input_sizes import construct_with_input_dim
from elmo_plugin.tasks.srl.metrics.dependency_srl_f1 import DependencySrlF1
from elmo_plugin.tasks.srl.models.bio_transitions import bio_transition_constraints

LABEL_MODES = ("span", "head")
# The predicate and the other parts of a multiword predicate are given, so never scored.
PREDICATE_CLASSES = ("V", "C-V")


@Model.register("deep_srl")
class DeepSrl(Model):
    """
    The deep SRL tagger of He et al. (2017), "Deep Semantic Role Labeling: What Works and
    What's Next", which Peters et al. (2018) extended with ELMo: each token's embedding
    (words, characters, ELMo: whatever `text_field_embedder` holds) is concatenated with an
    embedding of the 0/1 predicate indicator, run through a deep LSTM encoder (He et al.:
    `alternating_lstm`, layers in alternating directions with highway connections and
    recurrent dropout; a bidirectional encoder works too), and a softmax gives each token's
    tag.

    With `label_mode: "span"` the tags are BIO, decoding is Viterbi with hard BIO
    constraints (no `I-X` after anything but `B-X`/`I-X`), and the metrics are span
    precision/recall/F1 excluding the verb (`V`, and `C-V`, the other parts of a multiword
    predicate). With `label_mode: "head"` each argument head
    word is tagged with its role, decoding is the per-token argmax, and the metrics are
    CoNLL-2009-style (predicate, head, role) precision/recall/F1 (`DependencySrlF1`). Both
    report `precision-overall`, `recall-overall` and `f1-measure-overall`, and the learned
    ELMo layer weights when the embedder holds ELMo.

    Registered as a `Model` with name "deep_srl".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    encoder : `Lazy[Seq2SeqEncoder]` (or a built `Seq2SeqEncoder`)
        Built with its input size (`input_size` of an `alternating_lstm` or `lstm`) set to
        the embedder's output size plus `predicate_embedding_dim`, so a config leaves the
        size out and another biLM needs only its ELMo `options_file` and `weight_file`. A
        size the config gives, or a built encoder's, must equal it.
    predicate_embedding_dim : `int`, optional (default = `100`)
    label_mode : `str`, optional (default = `"span"`)
        `"span"` or `"head"`, as the dataset reader's `label_mode`.
    label_namespace : `str`, optional (default = `"span_labels"` or `"head_labels"`)
        As the dataset reader's.
    embedding_dropout : `float`, optional (default = `0.0`)
        Dropout on the concatenated token and predicate embeddings.
    initializer : `InitializerApplicator`, optional
        He et al. initialise the LSTM weights orthogonally.
    regularizer : `RegularizerApplicator`, optional
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Union[Lazy[Seq2SeqEncoder], Seq2SeqEncoder],
        predicate_embedding_dim: int = 100,
        label_mode: str = "span",
        label_namespace: Optional[str] = None,
        embedding_dropout: float = 0.0,
        initializer: InitializerApplicator = InitializerApplicator(),
        regularizer: Optional[RegularizerApplicator] = None,
    ) -> None:
        super().__init__(vocab, regularizer)
        label_namespace = label_namespace or f"{label_mode}_labels"
        self._check_label_mode(vocab, label_mode, label_namespace)
        self._label_mode = label_mode
        self._label_namespace = label_namespace
        # Built before the predicate embedding, as when the config built it.
        encoder = construct_with_input_dim(
            encoder,
            text_field_embedder.get_output_dim() + predicate_embedding_dim,
            "encoder",
            "token embedding dim + predicate_embedding_dim",
        )
        self._text_field_embedder = text_field_embedder
        self._predicate_embedding = torch.nn.Embedding(2, predicate_embedding_dim)
        self._encoder = encoder
        self._embedding_dropout = torch.nn.Dropout(embedding_dropout)
        num_tags = vocab.get_vocab_size(label_namespace)
        self._tag_projection = TimeDistributed(torch.nn.Linear(encoder.get_output_dim(), num_tags))
        labels = vocab.get_index_to_token_vocabulary(label_namespace)
        if label_mode == "span":
            transitions, start = bio_transition_constraints(labels)
            self._span_f1 = SpanBasedF1Measure(
                vocab, label_namespace, ignore_classes=list(PREDICATE_CLASSES)
            )
        else:
            transitions, start = torch.zeros(num_tags, num_tags), torch.zeros(num_tags)
            self._head_f1 = DependencySrlF1(ignore_classes=list(PREDICATE_CLASSES))
        # Buffers, not parameters: saved with the model, moved with it, never trained.
        self.register_buffer("_transitions", transitions, persistent=False)
        self.register_buffer("_start_transitions", start, persistent=False)
        initializer(self)

    @staticmethod
    def _check_label_mode(vocab: Vocabulary, label_mode: str, label_namespace: str) -> None:
        if label_mode not in LABEL_MODES:
            raise ConfigurationError(
                f"label_mode must be one of {LABEL_MODES}, found {label_mode!r}"
            )
        predicate_tag = "B-V" if label_mode == "span" else "V"
        tags = vocab.get_token_to_index_vocabulary(label_namespace)
        if predicate_tag not in tags:
            raise ConfigurationError(
                f"label_mode {label_mode!r} expects the tag {predicate_tag!r} in the "
                f"{label_namespace!r} vocabulary, which has {sorted(tags)[:10]}...: give the "
                "dataset reader and the model the same label_mode"
            )

    @overrides(check_signature=False)
    def forward(  # type: ignore
        self,
        tokens: TextFieldTensors,
        predicate_indicator: torch.LongTensor,
        tags: Optional[torch.LongTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        tokens : `TextFieldTensors`
        predicate_indicator : `torch.LongTensor`
            `(batch_size, num_tokens)`, 1 on the predicate.
        tags : `torch.LongTensor`, optional
            `(batch_size, num_tokens)` gold tag ids.
        metadata : `List[Dict[str, Any]]`, optional
            "words", "predicate_index" and "gold_tags" per instance.

        # Returns

        `"logits"` and `"class_probabilities"` `(batch_size, num_tokens, num_tags)`, `"mask"`,
        `"predicted_tag_ids"` (the decoded tags of each instance), `"loss"` given `tags`, and
        "words" and "predicate_index" given `metadata`.
        """
        if metadata:
            self._check_instances_label_mode(metadata[0].get("label_mode"))
        mask = get_text_field_mask(tokens)
        embedded = torch.cat(
            [self._text_field_embedder(tokens), self._predicate_embedding(predicate_indicator)],
            dim=-1,
        )
        encoded = self._encoder(self._embedding_dropout(embedded), mask)
        logits = self._tag_projection(encoded)
        class_probabilities = torch.softmax(logits, dim=-1)
        predicted_tag_ids = self._decode(class_probabilities, mask)
        output: Dict[str, Any] = {
            "logits": logits,
            "class_probabilities": class_probabilities,
            "mask": mask,
            "predicted_tag_ids": predicted_tag_ids,
        }
        if tags is not None:
            output["loss"] = sequence_cross_entropy_with_logits(logits, tags, mask)
            self._update_metrics(predicted_tag_ids, tags, mask, predicate_indicator)
        if metadata is not None:
            output["words"] = [instance["words"] for instance in metadata]
            output["predicate_index"] = [instance["predicate_index"] for instance in metadata]
        return output

    def _check_instances_label_mode(self, instances_label_mode: Optional[str]) -> None:
        # Both modes' tags can be in the vocabulary, so a mismatch would otherwise go unseen.
        if instances_label_mode not in (None, self._label_mode):
            raise ConfigurationError(
                f"the model has label_mode {self._label_mode!r} but the dataset reader made "
                f"{instances_label_mode!r} tags: give both the same label_mode"
            )

    def _decode(self, class_probabilities: torch.Tensor, mask: torch.BoolTensor) -> List[List[int]]:
        lengths = mask.sum(dim=-1).tolist()
        log_probabilities = torch.log(class_probabilities.detach() + 1e-12)
        if self._label_mode == "head":
            return [
                sequence[:length].argmax(dim=-1).tolist()
                for sequence, length in zip(log_probabilities, lengths)
            ]
        return [
            viterbi_decode(
                sequence[:length],
                self._transitions,
                allowed_start_transitions=self._start_transitions,
            )[0]
            for sequence, length in zip(log_probabilities, lengths)
        ]

    def _update_metrics(
        self,
        predicted_tag_ids: List[List[int]],
        gold_tags: torch.LongTensor,
        mask: torch.BoolTensor,
        predicate_indicator: torch.LongTensor,
    ) -> None:
        if self._label_mode == "span":
            # One-hot scores of the decoded tags, so the metric scores the constrained decode.
            decoded = torch.zeros_like(gold_tags)
            for i, ids in enumerate(predicted_tag_ids):
                decoded[i, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            num_tags = self.vocab.get_vocab_size(self._label_namespace)
            one_hot = torch.nn.functional.one_hot(decoded, num_tags).float()
            self._span_f1(one_hot, gold_tags, mask)
            return
        lengths = mask.sum(dim=-1).tolist()
        self._head_f1(
            [self._tag_strings(ids) for ids in predicted_tag_ids],
            [self._tag_strings(ids[:length].tolist()) for ids, length in zip(gold_tags, lengths)],
            predicate_indicator.argmax(dim=-1).tolist(),
        )

    def _tag_strings(self, tag_ids: List[int]) -> List[str]:
        return [self.vocab.get_token_from_index(i, self._label_namespace) for i in tag_ids]

    @overrides(check_signature=False)
    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds `"tags"`: the decoded tag strings of each instance."""
        output_dict["tags"] = [self._tag_strings(ids) for ids in output_dict["predicted_tag_ids"]]
        return output_dict

    @overrides
    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        if self._label_mode == "span":
            span_metrics = self._span_f1.get_metric(reset=reset)
            metrics = {name: value for name, value in span_metrics.items() if "overall" in name}
        else:
            metrics = self._head_f1.get_metric(reset=reset)
        metrics.update(elmo_layer_weight_metrics(self))
        return metrics

    default_predictor = "deep_srl"
