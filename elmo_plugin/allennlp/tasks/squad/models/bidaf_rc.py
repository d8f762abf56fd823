from typing import Any, Dict, List, Optional, Tuple, cast

import torch
from allennlp.common import Lazy
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Highway, Seq2SeqEncoder, TextFieldEmbedder, TimeDistributed
from allennlp.modules.matrix_attention import LinearMatrixAttention, MatrixAttention
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import (
    get_text_field_mask,
    masked_log_softmax,
    masked_softmax,
    replace_masked_values,
    weighted_sum,
)
from allennlp.training.metrics import BooleanAccuracy, CategoricalAccuracy
from overrides import overrides

from elmo_plugin.elmo import elmo_layer_weight_metrics
from elmo_plugin.allennlp.modules import Elmo
from elmo_plugin.allennlp.tasks.elmo_places import ElmoPlaces, PlacedElmo
from elmo_plugin.allennlp.tasks.float32_embedding import embed_in_float32
from elmo_plugin.allennlp.tasks.input_sizes import construct_with_input_dim
from elmo_plugin.allennlp.tasks.squad.metrics.squad_v1_em_f1 import SquadV1EmF1
from elmo_plugin.allennlp.tasks.squad.models.span_decoding import best_span


@Model.register("bidaf_rc")
class BidafRc(Model):
    """
    Bidirectional Attention Flow (Seo et al. 2017) for extractive question answering, with
    ELMo (Peters et al. 2018) at its input, its output, or both.

    Question and passage are embedded (`text_field_embedder`, plus ELMo with
    `use_input_elmo`), passed through highway layers and a shared contextual encoder
    (`phrase_layer`); bidirectional attention gives, per passage token, `G = [h; q~; h*q~;
    h*h~]`. With `use_output_elmo` the passage's second ELMo representation is concatenated to
    `G` (the paper's "ELMo at the output": `[h_k; ELMo_k]` on the biRNN states the task layers
    read). The `modeling_layer` reads `G` into `M`; span starts are scored from `[G; M]`, span
    ends from `[G; span_end_encoder(M)]`. The loss is the negative log-likelihood of the gold
    start plus that of the gold end; decoding picks the best span with start <= end and at
    most `max_span_length` tokens.

    ELMo runs once per text (`elmo`, an `Elmo` with one representation per use, through
    `ElmoPlaces`): the `"elmo"` indexer's ids are left out of what the `text_field_embedder`
    sees, and the caller's batch is left as it was.

    Registered as a `Model` with name "bidaf_rc".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        Embeds every indexer of the question and passage but `"elmo"`.
    phrase_layer : `Lazy[Seq2SeqEncoder]`
        The contextual encoder, built with `input_size` = embedding size (with
        `use_input_elmo`, plus the ELMo size).
    modeling_layer : `Lazy[Seq2SeqEncoder]`
        Built with `input_size` = size of `G` (with `use_output_elmo`, plus the ELMo size).
    span_end_encoder : `Lazy[Seq2SeqEncoder]`
        Built with `input_size` = output size of `modeling_layer`.
    num_highway_layers : `int`, optional (default = `2`)
    matrix_attention : `MatrixAttention`, optional
        Question-passage similarity; the BiDAF trilinear `w^T [h; u; h*u]` by default.
    dropout : `float`, optional (default = `0.2`)
    elmo : `Elmo`, optional
        The biLM and its layer mixes, one mix per use (input and/or output).
        Its output size enters the input sizes of `phrase_layer` and `modeling_layer`, so a
        config leaves those sizes out and another biLM needs only its `options_file` and
        `weight_file`; a size the config gives must equal the computed one (a
        `ConfigurationError` otherwise).
    use_input_elmo : `bool`, optional (default = `False`)
        Concatenate ELMo representation 0 to the embeddings.
    use_output_elmo : `bool`, optional (default = `False`)
        Concatenate the next ELMo representation to `G`.
    max_span_length : `int`, optional (default = `30`)
        Longest answer (in tokens) the decoder may pick; `None` for no limit.
    mask_lstms : `bool`, optional (default = `True`)
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "squad_answer"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        phrase_layer: Lazy[Seq2SeqEncoder],
        modeling_layer: Lazy[Seq2SeqEncoder],
        span_end_encoder: Lazy[Seq2SeqEncoder],
        num_highway_layers: int = 2,
        matrix_attention: Optional[MatrixAttention] = None,
        dropout: float = 0.2,
        elmo: Optional[Elmo] = None,
        use_input_elmo: bool = False,
        use_output_elmo: bool = False,
        max_span_length: Optional[int] = 30,
        mask_lstms: bool = True,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._text_field_embedder = text_field_embedder
        self._elmo = elmo
        self._elmo_places = ElmoPlaces("bidaf_rc", elmo, use_input_elmo, use_output_elmo)

        embedding_dim = text_field_embedder.get_output_dim() + self._elmo_places.input_dim
        self._highway_layer = TimeDistributed(Highway(embedding_dim, num_highway_layers))
        self._phrase_layer = construct_with_input_dim(
            phrase_layer, embedding_dim, "phrase_layer", "embedding dim (+ ELMo at the input)"
        )
        encoding_dim = self._phrase_layer.get_output_dim()
        self._matrix_attention = matrix_attention or LinearMatrixAttention(
            encoding_dim, encoding_dim, "x,y,x*y"
        )
        merged_dim = 4 * encoding_dim + self._elmo_places.output_dim
        self._modeling_layer = construct_with_input_dim(
            modeling_layer, merged_dim, "modeling_layer", "size of G (+ ELMo at the output)"
        )
        modeling_dim = self._modeling_layer.get_output_dim()
        self._span_start_predictor = TimeDistributed(torch.nn.Linear(merged_dim + modeling_dim, 1))
        self._span_end_encoder = construct_with_input_dim(
            span_end_encoder, modeling_dim, "span_end_encoder", "modeling_layer output dim"
        )
        span_end_dim = self._span_end_encoder.get_output_dim()
        self._span_end_predictor = TimeDistributed(torch.nn.Linear(merged_dim + span_end_dim, 1))

        self._dropout = torch.nn.Dropout(p=dropout) if dropout > 0 else torch.nn.Identity()
        self._mask_lstms = mask_lstms
        self._max_span_length = max_span_length
        self._span_start_accuracy = CategoricalAccuracy()
        self._span_end_accuracy = CategoricalAccuracy()
        self._span_accuracy = BooleanAccuracy()
        self._squad_metrics = SquadV1EmF1()
        initializer(self)

    @overrides(check_signature=False)
    def forward(
        self,
        question: TextFieldTensors,
        passage: TextFieldTensors,
        span_start: Optional[torch.LongTensor] = None,
        span_end: Optional[torch.LongTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        question, passage : `TextFieldTensors`
        span_start, span_end : `torch.LongTensor`, optional
            `(batch_size, 1)` gold span indices into the passage; -1 where the answer lies
            outside the (cut) passage, which the loss and span accuracies then ignore.
        metadata : `List[Dict[str, Any]]`, optional
            From the `squad_v1` reader: `passage`, `token_offsets`, `answer_texts`, ...

        # Returns

        `span_start_logits`, `span_start_probs`, `span_end_logits`, `span_end_probs`,
        `best_span` (`(batch_size, 2)` token indices), and with metadata `best_span_str`,
        `best_span_chars` and `question_id`; `loss` when gold spans are given.
        """
        question_elmo = self._elmo_places(question)
        passage_elmo = self._elmo_places(passage)
        question_mask = get_text_field_mask(question_elmo.text)
        passage_mask = get_text_field_mask(passage_elmo.text)

        encoded_question = self._encode(question_elmo, question_mask)
        encoded_passage = self._encode(passage_elmo, passage_mask)
        merged_passage = self._attention_flow(
            encoded_passage, encoded_question, passage_mask, question_mask
        )
        if passage_elmo.output is not None:
            merged_passage = torch.cat([merged_passage, passage_elmo.output], dim=-1)
        span_start_logits, span_end_logits = self._span_logits(merged_passage, passage_mask)

        span_start_log_probs = masked_log_softmax(span_start_logits, passage_mask)
        span_end_log_probs = masked_log_softmax(span_end_logits, passage_mask)
        output: Dict[str, Any] = {
            "span_start_logits": span_start_logits,
            "span_start_probs": span_start_log_probs.exp(),
            "span_end_logits": span_end_logits,
            "span_end_probs": span_end_log_probs.exp(),
            "best_span": best_span(
                span_start_log_probs, span_end_log_probs, passage_mask, self._max_span_length
            ),
        }
        if span_start is not None and span_end is not None:
            output["loss"] = self._loss_and_span_metrics(
                span_start_log_probs, span_end_log_probs, output["best_span"], span_start, span_end
            )
        if metadata is not None:
            self._add_answer_strings(output, metadata)
        return output

    def _encode(self, elmo: PlacedElmo, mask: torch.BoolTensor) -> torch.Tensor:
        embedded = embed_in_float32(self._text_field_embedder, elmo.text)
        if elmo.input is not None:
            embedded = torch.cat([embedded, elmo.input], dim=-1)
        embedded = self._highway_layer(embedded)
        lstm_mask = mask if self._mask_lstms else None
        return self._dropout(self._phrase_layer(embedded, lstm_mask))

    def _attention_flow(
        self,
        encoded_passage: torch.Tensor,
        encoded_question: torch.Tensor,
        passage_mask: torch.BoolTensor,
        question_mask: torch.BoolTensor,
    ) -> torch.Tensor:
        # (batch, passage_length, question_length)
        similarity = self._matrix_attention(encoded_passage, encoded_question)
        # Bool, but typed a plain Tensor by torch.
        question_mask_rows = cast(torch.BoolTensor, question_mask.unsqueeze(1))
        passage_question_attention = masked_softmax(similarity, question_mask_rows)
        passage_question_vectors = weighted_sum(encoded_question, passage_question_attention)

        lowest = torch.finfo(similarity.dtype).min
        masked_similarity = replace_masked_values(similarity, question_mask_rows, lowest)
        question_passage_attention = masked_softmax(
            masked_similarity.max(dim=-1).values, passage_mask
        )
        question_passage_vector = weighted_sum(encoded_passage, question_passage_attention)
        question_passage_vectors = question_passage_vector.unsqueeze(1).expand_as(encoded_passage)
        return torch.cat(
            [
                encoded_passage,
                passage_question_vectors,
                encoded_passage * passage_question_vectors,
                encoded_passage * question_passage_vectors,
            ],
            dim=-1,
        )

    def _span_logits(
        self, merged_passage: torch.Tensor, passage_mask: torch.BoolTensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        lstm_mask = passage_mask if self._mask_lstms else None
        modeled_passage = self._dropout(self._modeling_layer(merged_passage, lstm_mask))
        start_input = self._dropout(torch.cat([merged_passage, modeled_passage], dim=-1))
        span_start_logits = self._span_start_predictor(start_input).squeeze(-1)

        span_end_encoded = self._dropout(self._span_end_encoder(modeled_passage, lstm_mask))
        end_input = self._dropout(torch.cat([merged_passage, span_end_encoded], dim=-1))
        span_end_logits = self._span_end_predictor(end_input).squeeze(-1)
        lowest = torch.finfo(span_start_logits.dtype).min
        return (
            replace_masked_values(span_start_logits, passage_mask, lowest),
            replace_masked_values(span_end_logits, passage_mask, lowest),
        )

    def _loss_and_span_metrics(
        self,
        span_start_log_probs: torch.Tensor,
        span_end_log_probs: torch.Tensor,
        predicted_span: torch.Tensor,
        span_start: torch.Tensor,
        span_end: torch.Tensor,
    ) -> torch.Tensor:
        span_start = span_start.view(-1)
        span_end = span_end.view(-1)
        # Bool masks, typed plain Tensors by torch.
        labelled = cast(torch.BoolTensor, span_start >= 0)
        self._span_start_accuracy(span_start_log_probs, span_start, labelled)
        self._span_end_accuracy(span_end_log_probs, span_end, labelled)
        gold_span = torch.stack([span_start, span_end], dim=-1)
        labelled_spans = cast(torch.BoolTensor, labelled.unsqueeze(-1).expand_as(gold_span))
        self._span_accuracy(predicted_span, gold_span, labelled_spans)
        if not labelled.any():
            # Keeps the graph, so a batch without labels is a zero step rather than an error.
            return span_start_log_probs.sum() * 0.0
        rows = labelled.nonzero(as_tuple=True)[0]
        start_nll = -span_start_log_probs[rows, span_start[rows]].mean()
        end_nll = -span_end_log_probs[rows, span_end[rows]].mean()
        return start_nll + end_nll

    def _add_answer_strings(self, output: Dict[str, Any], metadata: List[Dict[str, Any]]) -> None:
        spans = output["best_span"].tolist()
        char_spans = [
            (meta["token_offsets"][start][0], meta["token_offsets"][end][1])
            for (start, end), meta in zip(spans, metadata)
        ]
        answers = [meta["passage"][start:end] for (start, end), meta in zip(char_spans, metadata)]
        output["best_span_chars"] = char_spans
        output["best_span_str"] = answers
        output["question_id"] = [meta.get("question_id") for meta in metadata]
        references: List[List[str]] = [meta.get("answer_texts") or [] for meta in metadata]
        if all(references):
            self._squad_metrics(answers, references)

    @overrides
    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        squad = self._squad_metrics.get_metric(reset)
        metrics = {
            "start_acc": self._span_start_accuracy.get_metric(reset),
            "end_acc": self._span_end_accuracy.get_metric(reset),
            "span_acc": self._span_accuracy.get_metric(reset),
            "em": squad["em"],
            "f1": squad["f1"],
        }
        metrics.update(elmo_layer_weight_metrics(self))
        return metrics
