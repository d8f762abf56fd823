from typing import Any, Dict, Iterable, List, Optional, Union

import torch
from allennlp.common import Lazy
from allennlp.common.checks import check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.data.dataset_readers.dataset_utils.span_utils import (
    TypedStringSpan,
    bio_tags_to_spans,
)
from allennlp.models.model import Model
from allennlp.modules import (
    FeedForward,
    Seq2SeqEncoder,
    TextFieldEmbedder,
    TimeDistributed,
)
from allennlp.modules.conditional_random_field import allowed_transitions
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask
from allennlp.training.metrics import SpanBasedF1Measure
from overrides import overrides

from elmo_plugin.elmo import elmo_layer_weight_metrics
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.decoded_paths import decoded_paths_to_one_hot
from elmo_plugin.allennlp.tasks.float32_embedding import embed_in_float32
from elmo_plugin.allennlp.tasks.input_sizes import construct_with_input_dim
from elmo_plugin.allennlp.tasks.ner.models.linear_time_crf import LinearTimeCrf
from elmo_plugin.allennlp.tasks.ner.tag_schemes import bioul_to_bio

_SCHEME_PREFIXES = {"BIO": {"B", "I"}, "BIOUL": {"B", "I", "L", "U"}}


@Model.register("bilstm_crf_tagger")
class BiLstmCrfTagger(Model):
    """
    The sequence tagger of the ELMo paper's NER experiments (after Lample et al. 2016 and
    Peters et al. 2017): embedded tokens (words, characters and, for ELMo, the `elmo` token
    embedder concatenated to them) → dropout → a `Seq2SeqEncoder` (e.g. a 2-layer biLSTM)
    → dropout → an optional `FeedForward` → a linear layer scoring each tag → a
    conditional random field (AllenNLP's, with a backward pass linear in the sentence length:
    `LinearTimeCrf`) whose transitions are constrained to the tag scheme. Decoding is Viterbi;
    the metric is span-based F1 (precision, recall and F1 over whole entities). `get_metrics`
    also reports the learned ELMo layer weights (`_elmo_mix0_*`).

    AllenNLP core has no CRF tagger; allennlp-models' `crf_tagger` is this architecture but is
    not a runtime dependency (`docs/install.md`). What ours adds over it: the encoder is `Lazy`
    and sized from the embedder, so a config states no input size; `LinearTimeCrf` (with
    `crf_tagger`'s CRF, a 10,000-token line of a broken file takes minutes to train on); the
    vocabulary's labels are checked against `label_encoding` (a mismatch would build wrong CRF
    constraints silently); spans are read from BIOUL folded into BIO, so the invalid sequences
    an unconstrained CRF can decode do not fail the metric; "spans" with their text in the
    output; the ELMo layer weights in the metrics; the loss averaged over the batch (summed
    there). What `crf_tagger` has and ours leaves out: `top_k` paths, label weights,
    `ignore_loss_on_o_tags`, token accuracy and the IOB1 and BMES encodings.

    Registered as a `Model` with name "bilstm_crf_tagger".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    encoder : `Lazy[Seq2SeqEncoder]` (or a built `Seq2SeqEncoder`)
        Built with its input size (`input_size` of an `lstm`) set to the embedder's output
        size, so a config leaves the size out and another biLM needs only its ELMo
        `options_file` and `weight_file`. A size the config gives, or a built encoder's,
        must equal it.
    label_encoding : `str`, optional (default = `"BIOUL"`)
        The reader's `tag_scheme`: `"BIO"` or `"BIOUL"`.
    label_namespace : `str`, optional (default = `"labels"`)
    feedforward : `FeedForward`, optional
        Between the encoder and the tag scores.
    dropout : `float`, optional (default = `0.5`)
        On the embeddings and on the encoder output.
    constrain_crf_decoding : `bool`, optional (default = `True`)
        Forbid the transitions the tag scheme does not allow (e.g. `O` → `I-PER`).
    include_start_end_transitions : `bool`, optional (default = `True`)
    verbose_metrics : `bool`, optional (default = `False`)
        Report precision, recall and F1 per entity type too.
    initializer : `InitializerApplicator`, optional
    kwargs
        Passed to `Model`, e.g. `regularizer` (see `elmo.regularizer(lambda)` in
        `training_configs/common/elmo.libsonnet` for the paper's penalty on the
        layer weights).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Union[Lazy[Seq2SeqEncoder], Seq2SeqEncoder],
        label_encoding: str = "BIOUL",
        label_namespace: str = "labels",
        feedforward: Optional[FeedForward] = None,
        dropout: float = 0.5,
        constrain_crf_decoding: bool = True,
        include_start_end_transitions: bool = True,
        verbose_metrics: bool = False,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self.label_encoding = label_encoding
        self.label_namespace = label_namespace
        labels = vocab.get_index_to_token_vocabulary(label_namespace)
        check_labels_fit_encoding(labels.values(), label_encoding)
        encoder = construct_with_input_dim(
            encoder, text_field_embedder.get_output_dim(), "encoder", "text field embedding dim"
        )
        if feedforward is not None:
            check_dimensions_match(
                encoder.get_output_dim(),
                feedforward.get_input_dim(),
                "encoder output dim",
                "feedforward input dim",
            )
        self.text_field_embedder = text_field_embedder
        self.encoder = encoder
        self.feedforward = feedforward
        self.dropout = torch.nn.Dropout(dropout)
        scores_input_dim = (feedforward or encoder).get_output_dim()
        self.tag_scores = TimeDistributed(torch.nn.Linear(scores_input_dim, len(labels)))
        constraints = (
            allowed_transitions(label_encoding, labels) if constrain_crf_decoding else None
        )
        self.crf = LinearTimeCrf(
            len(labels), constraints, include_start_end_transitions=include_start_end_transitions
        )
        self._verbose_metrics = verbose_metrics
        self._f1 = SpanBasedF1Measure(
            vocab, label_namespace, label_encoding=None, tags_to_spans_function=tags_to_spans
        )
        initializer(self)

    @overrides(check_signature=False)
    def forward(
        self,
        tokens: TextFieldTensors,
        tags: Optional[torch.LongTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        tokens : `TextFieldTensors`
        tags : `torch.LongTensor`, optional
            `(batch_size, num_tokens)` gold tag ids.
        metadata : `List[Dict[str, Any]]`, optional
            Each sentence's "words".

        # Returns

        "tags" (the Viterbi tag ids of each sentence), "logits", "mask", and with gold tags
        "loss" (the CRF's negative log-likelihood, averaged over the batch).
        """
        mask = get_text_field_mask(tokens)
        encoded = self.dropout(
            self.encoder(self.dropout(embed_in_float32(self.text_field_embedder, tokens)), mask)
        )
        if self.feedforward is not None:
            encoded = self.feedforward(encoded)
        logits = self.tag_scores(encoded)
        best_paths = self.crf.viterbi_tags(logits, mask)
        output: Dict[str, Any] = {
            "tags": [path for path, _score in best_paths],
            "logits": logits,
            "mask": mask,
        }
        if metadata is not None:
            output["words"] = [sentence["words"] for sentence in metadata]
        if tags is not None:
            output["loss"] = -self.crf(logits, tags, mask) / tags.size(0)
            self._f1(decoded_paths_to_one_hot(output["tags"], logits), tags, mask)
        return output

    @overrides(check_signature=False)
    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Tag ids become tag strings; adds "spans": each entity as `{"label", "start",
        "end", "text"}` with an inclusive token `end`."""
        labels = self.vocab.get_index_to_token_vocabulary(self.label_namespace)
        output_dict["tags"] = [
            [labels[int(tag)] for tag in sentence_tags] for sentence_tags in output_dict["tags"]
        ]
        output_dict["spans"] = [
            self.entity_spans(sentence_tags, words)
            for sentence_tags, words in zip(
                output_dict["tags"], output_dict.get("words", [None] * len(output_dict["tags"]))
            )
        ]
        return output_dict

    def entity_spans(self, tags: List[str], words: Optional[List[str]]) -> List[Dict[str, Any]]:
        spans = sorted(tags_to_spans(tags), key=lambda span: span[1])
        return [
            {
                "label": label,
                "start": start,
                "end": end,
                **({"text": " ".join(words[start : end + 1])} if words is not None else {}),
            }
            for label, (start, end) in spans
        ]

    @overrides
    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        f1 = self._f1.get_metric(reset=reset)
        metrics = f1 if self._verbose_metrics else {k: v for k, v in f1.items() if "overall" in k}
        metrics.update(elmo_layer_weight_metrics(self))
        return metrics

    default_predictor = "conll_ner"


def tags_to_spans(
    tags: List[str], classes_to_ignore: Optional[List[str]] = None
) -> List[TypedStringSpan]:
    """The entity spans of BIO or BIOUL tags. BIOUL folds into BIO (U to B, L to I), which
    gives the same spans for valid tags and, unlike AllenNLP's strict BIOUL decoder, also
    reads the invalid sequences an unconstrained CRF can decode."""
    return bio_tags_to_spans(bioul_to_bio(tags), classes_to_ignore)


def check_labels_fit_encoding(labels: Iterable[str], label_encoding: str) -> None:
    """A label the scheme cannot contain means the reader's `tag_scheme` and the model's
    `label_encoding` disagree; the CRF constraints would then be wrong."""
    if label_encoding not in _SCHEME_PREFIXES:
        raise ConfigurationError(
            f"label_encoding must be one of {sorted(_SCHEME_PREFIXES)}, got {label_encoding!r}"
        )
    prefixes = _SCHEME_PREFIXES[label_encoding]
    for label in labels:
        if label != "O" and label.partition("-")[0] not in prefixes:
            raise ConfigurationError(
                f"label {label!r} is not a {label_encoding} tag; set the model's "
                f"label_encoding to the dataset reader's tag_scheme"
            )
