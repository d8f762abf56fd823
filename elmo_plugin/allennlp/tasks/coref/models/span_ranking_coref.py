from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union, cast

import torch
from allennlp.common import Lazy
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.span_extractors import EndpointSpanExtractor
from allennlp.nn import InitializerApplicator, util
from overrides import overrides

from elmo_plugin.elmo import elmo_layer_weight_metrics
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.modules import Elmo
from elmo_plugin.allennlp.tasks.coref.metrics import Conll2012CorefScores, CorefMentionRecall
from elmo_plugin.allennlp.tasks.coref.models.factored_pair_layer import FactoredPairLayer
from elmo_plugin.allennlp.tasks.coref.models.sentence_layout import SentenceLayout
from elmo_plugin.allennlp.tasks.elmo_places import ElmoPlaces
from elmo_plugin.allennlp.tasks.float32_embedding import embed_in_float32
from elmo_plugin.allennlp.tasks.input_sizes import construct_with_input_dim

Span = Tuple[int, int]


class _KeptSpans(NamedTuple):
    """The spans that pruning keeps, `(batch_size, max_kept, ...)`, in document order."""

    indices: torch.Tensor  # into the document's spans
    flat_indices: torch.Tensor  # the same, batch-shifted and flat
    mask: torch.Tensor  # false past each document's number kept
    scores: torch.Tensor  # the mention scores
    spans: torch.Tensor
    embeddings: torch.Tensor


class _Antecedents(NamedTuple):
    """The candidate antecedents of each kept span: the kept spans just before it."""

    offsets: torch.Tensor  # (1, num_antecedents): 1, 2, ..., each candidate's distance
    indices: torch.Tensor  # (batch_size, max_kept, num_antecedents), into the kept spans
    flat_indices: torch.Tensor  # the same, batch-shifted and flat
    mask: torch.Tensor  # false for candidates before the first span and for padding spans


@Model.register("span_ranking_coref")
class SpanRankingCoref(Model):
    """
    End-to-end coreference resolution by span ranking (Lee et al. 2017, "End-to-end Neural
    Coreference Resolution"), with ELMo at its input (Peters et al. 2018, section 4 and Table
    1: 67.2 -> 70.4 average F1 on CoNLL-2012).

    Every span of at most `max_span_width` words inside a sentence (the reader's `spans`) gets
    a representation `g = [x*_start; x*_end; x^; phi(width)]`: the `context_layer`'s outputs
    at its first and last word, an attention-weighted sum `x^` of its words' embeddings (the
    attention logits a linear function of the context layer's outputs, Lee et al.'s head
    finder), and a learned width embedding. A mention score `s_m = w . FFNN_m(g)` prunes the
    spans to the `spans_per_word * num_words` best of each document; each kept span `i` then
    scores its `max_antecedents` nearest kept predecessors `j`,
    `s(i, j) = s_m(i) + s_m(j) + w . FFNN_a([g_i; g_j; g_i * g_j; phi(distance)])`
    (the distance in kept spans, bucketed), beside a dummy antecedent (no link) scored 0. The
    loss is the negative marginal log-likelihood of the antecedents in the span's gold cluster
    (the dummy when there are none); decoding links each kept span to its best antecedent and
    the clusters follow the links.

    The embeddings of the `text_field_embedder` (words, characters; dropped by
    `lexical_dropout`) run through the `context_layer` sentence by sentence, as in Lee et al.
    With `use_input_elmo`, the `elmo` module's vectors are concatenated to them there, ELMo run
    a sentence at a time too (the sentences of a batch are one batch of the biLM, as Lee et
    al. 2018 feed it; the activation cache keys sentences). The attention head sums the
    `text_field_embedder`'s embeddings only, without ELMo, as Lee et al. 2018's `head_emb`
    does.

    The design is allennlp-models' `coref` (not a dependency here); ours differs in or adds:
    - Sizes: every layer's input size is set from the embedders, the ELMo module and the
      layers before (`construct_with_input_dim`), so a config states none; another biLM is an
      override of the ELMo files only.
    - ELMo is a place of its own (`ElmoPlaces`, one biLM run a batch, sentence by sentence),
      the embeddings are computed in float32 under AMP (`embed_in_float32`), and
      `get_metrics` reports the ELMo layer weights; `coref` runs any embedder over the
      whole flattened document.
    - The context layer runs over each sentence (Lee et al. 2017), `coref`'s over the
      flattened document.
    - The attention head's logits come from the context layer and it sums the word
      embeddings (Lee et al.); `coref`'s `self_attentive` extractor scores and sums the
      text embeddings.
    - The number of spans kept is `spans_per_word` times each document's own number of words,
      not the batch's padded length, and padding spans add nothing to the loss (`coref`'s
      masked log-softmax leaves the padded kept spans' terms in it), so a batch predicts what
      its documents predict alone.
    - Metrics: the reference scorer's MUC, B3 and CEAF-e (`conll2012_coref_scores`), mention
      recall; coarse-to-fine pruning and higher-order inference (Lee et al. 2018) are left out.

    Registered as a `Model` with name "span_ranking_coref".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        Embeds every indexer of the text field but `"elmo"` (the ELMo module's).
    context_layer : `Lazy[Seq2SeqEncoder]` (or built)
        A biLSTM in Lee et al.; input size = the embedder's output size plus, with
        `use_input_elmo`, the ELMo size.
    mention_feedforward : `Lazy[FeedForward]` (or built)
        Input size = the span representation's, `2 * context output + embedding dim +
        feature_size`; a linear layer to the score follows.
    antecedent_feedforward : `Lazy[FeedForward]` (or built)
        The antecedent scorer's layers after its first (the pair layer); input size =
        `antecedent_hidden_dim`; a linear layer to the score follows.
    antecedent_hidden_dim : `int`, optional (default = `150`)
        The size of the pair layer, the first layer of the antecedent scorer (Lee et al.: 150).
    antecedent_dropout : `float`, optional (default = `0.2`)
        Dropout after the pair layer's ReLU.
    feature_size : `int`, optional (default = `20`)
        The size of the width and distance embeddings.
    max_span_width : `int`, optional (default = `10`)
        The widest span (the reader's `max_span_width` must not exceed it).
    spans_per_word : `float`, optional (default = `0.4`)
        Spans kept after pruning, per word of the document.
    max_antecedents : `int`, optional (default = `50`)
        Antecedents scored for each kept span (Lee et al. 2017: 250).
    elmo : `Elmo`, optional
        With `use_input_elmo`: one `num_output_representations`.
    use_input_elmo : `bool`, optional (default = `False`)
    lexical_dropout : `float`, optional (default = `0.5`)
        Dropout on the word embeddings (ELMo has its own `dropout`).
    num_distance_buckets : `int`, optional (default = `10`)
        Buckets of `util.bucket_values` for the antecedent distance (1, 2, 3, 4, 5-7, 8-15,
        ...).
    initializer : `InitializerApplicator`, optional (default = `InitializerApplicator()`)
    **kwargs
        Passed to `Model` (e.g. `regularizer`).
    """

    default_predictor = "coref_clusters"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        context_layer: Union[Lazy[Seq2SeqEncoder], Seq2SeqEncoder],
        mention_feedforward: Union[Lazy[FeedForward], FeedForward],
        antecedent_feedforward: Union[Lazy[FeedForward], FeedForward],
        antecedent_hidden_dim: int = 150,
        antecedent_dropout: float = 0.2,
        feature_size: int = 20,
        max_span_width: int = 10,
        spans_per_word: float = 0.4,
        max_antecedents: int = 50,
        elmo: Optional[Elmo] = None,
        use_input_elmo: bool = False,
        lexical_dropout: float = 0.5,
        num_distance_buckets: int = 10,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        if max_span_width < 1 or max_antecedents < 1 or not 0 < spans_per_word:
            raise ConfigurationError(
                "span_ranking_coref: max_span_width and max_antecedents must be at least 1 and "
                f"spans_per_word above 0, got {max_span_width}, {max_antecedents}, "
                f"{spans_per_word}"
            )
        self._elmo_places = ElmoPlaces("span_ranking_coref", elmo, use_input_elmo, False)
        self._elmo = elmo
        self._text_field_embedder = text_field_embedder
        embedding_dim = text_field_embedder.get_output_dim()
        if embedding_dim == 0:
            raise ConfigurationError(
                "span_ranking_coref: the text_field_embedder has no output; the attention head "
                "sums word embeddings, so give it a token embedder"
            )
        self._context_layer = construct_with_input_dim(
            context_layer,
            embedding_dim + self._elmo_places.input_dim,
            "context_layer",
            "embedding dim (+ ELMo at the input)",
        )
        context_dim = self._context_layer.get_output_dim()
        self._endpoint_span_extractor = EndpointSpanExtractor(
            context_dim,
            combination="x,y",
            num_width_embeddings=max_span_width,
            span_width_embedding_dim=feature_size,
        )
        # No bias: the softmax over a span's words ignores a constant.
        self._head_attention = torch.nn.Linear(context_dim, 1, bias=False)
        span_dim = self._endpoint_span_extractor.get_output_dim() + embedding_dim
        self._mention_feedforward = construct_with_input_dim(
            mention_feedforward,
            span_dim,
            "mention_feedforward",
            "span representation dim (2 * context_layer output + embedding dim + feature_size)",
        )
        self._mention_scorer = torch.nn.Linear(self._mention_feedforward.get_output_dim(), 1)
        self._pair_layer = FactoredPairLayer(span_dim, feature_size, antecedent_hidden_dim)
        self._pair_dropout = torch.nn.Dropout(antecedent_dropout)
        self._antecedent_feedforward = construct_with_input_dim(
            antecedent_feedforward,
            antecedent_hidden_dim,
            "antecedent_feedforward",
            "antecedent_hidden_dim (the pair layer's output)",
        )
        self._antecedent_scorer = torch.nn.Linear(self._antecedent_feedforward.get_output_dim(), 1)
        self._num_distance_buckets = num_distance_buckets
        self._distance_embedding = torch.nn.Embedding(num_distance_buckets, feature_size)
        self._max_span_width = max_span_width
        self._spans_per_word = spans_per_word
        self._max_antecedents = max_antecedents
        self._lexical_dropout = torch.nn.Dropout(lexical_dropout)
        self._conll_scores = Conll2012CorefScores()
        self._mention_recall = CorefMentionRecall()
        initializer(self)

    @overrides(check_signature=False)
    def forward(
        self,
        text: TextFieldTensors,
        sentence_lengths: torch.Tensor,
        spans: torch.Tensor,
        span_labels: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        text : `TextFieldTensors`
            The words of each document (segment).
        sentence_lengths : `torch.LongTensor`
            `(batch_size, max_num_sentences)`, padded with 0.
        spans : `torch.LongTensor`
            `(batch_size, num_spans, 2)` inclusive word positions, padded with -1, each inside
            a sentence, in document order.
        span_labels : `torch.LongTensor`, optional
            `(batch_size, num_spans)`: each span's gold cluster, -1 for none.
        metadata : `List[Dict[str, Any]]`, optional
            With `"clusters"` (the gold clusters, for the metrics) and `"words"`.

        # Returns

        `top_spans` `(batch_size, num_kept, 2)` (the kept spans, -1 past each document's
        number), `antecedent_indices` `(batch_size, num_kept, num_antecedents)` (indices into
        `top_spans`), `predicted_antecedents` `(batch_size, num_kept)` (an index into that
        span's `antecedent_indices`, -1 for none), `loss` with `span_labels`, `words` with
        metadata.
        """
        mask, layout, word_counts = self._checked_layout(text, sentence_lengths)
        embedded, contextual = self._embed_in_context(text, layout)
        spans, span_mask, span_embeddings = self._span_embeddings(contextual, embedded, spans, mask)
        mention_scores = self._mention_scorer(self._mention_feedforward(span_embeddings))
        mention_scores = mention_scores.squeeze(-1)
        kept = self._prune(spans, span_mask, span_embeddings, mention_scores, word_counts)
        antecedents = self._nearest_antecedents(kept)
        coreference_scores = self._coreference_scores(kept, antecedents)
        predicted_antecedents = coreference_scores.argmax(dim=-1) - 1
        predicted_antecedents = torch.where(
            kept.mask, predicted_antecedents, torch.full_like(predicted_antecedents, -1)
        )
        top_spans = torch.where(
            kept.mask.unsqueeze(-1), kept.spans, torch.full_like(kept.spans, -1)
        )
        output: Dict[str, Any] = {
            "top_spans": top_spans,
            "antecedent_indices": antecedents.indices,
            "predicted_antecedents": predicted_antecedents,
        }
        if span_labels is not None:
            output["loss"] = _loss(coreference_scores, span_labels, kept, antecedents)

        if metadata is not None:
            output["words"] = [entry.get("words") for entry in metadata]
            if all("clusters" in entry for entry in metadata):
                self._update_metrics(output, metadata)
        return output

    def _checked_layout(
        self, text: TextFieldTensors, sentence_lengths: torch.Tensor
    ) -> Tuple[torch.Tensor, SentenceLayout, torch.Tensor]:
        """The word mask, the sentence layout and each document's number of words; a
        `ValueError` when the sentence lengths do not cover the words."""
        mask = util.get_text_field_mask(text)
        num_words = mask.size(1)
        layout = SentenceLayout(sentence_lengths, num_words)
        word_counts = mask.sum(dim=1)
        if not torch.equal(layout.word_mask, mask):
            raise ValueError(
                f"the sentence lengths cover {layout.word_mask.sum(dim=1).tolist()} words of "
                f"documents of {word_counts.tolist()} words"
            )
        return mask, layout, word_counts

    def _embed_in_context(
        self, text: TextFieldTensors, layout: SentenceLayout
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """The word embeddings (after lexical dropout) and the context layer's outputs, both
        `(batch_size, num_words, ...)`; ELMo and the context layer run sentence by sentence."""
        # The biLM reads one sentence a row (as it was trained; its cache keys sentences).
        placed = self._elmo_places(text, rows=layout.to_sentences)
        # Shape: (batch_size, num_words, embedding_dim)
        embedded = self._lexical_dropout(embed_in_float32(self._text_field_embedder, placed.text))
        # Shape: (num_sentences, max_sentence_length, embedding_dim (+ ELMo))
        sentence_input = layout.to_sentences(embedded)
        if placed.input is not None:
            sentence_input = torch.cat([sentence_input, placed.input], dim=-1)
        contextual = layout.to_documents(self._context_layer(sentence_input, layout.mask))
        return embedded, contextual

    def _span_embeddings(
        self,
        contextual: torch.Tensor,
        embedded: torch.Tensor,
        spans: torch.Tensor,
        mask: torch.Tensor,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The spans with their padding (-1) set to 0, the span mask, and each span's
        representation `[x*_start; x*_end; phi(width); x^]`, `(batch_size, num_spans, span_dim)`."""
        span_mask = spans[:, :, 0] >= 0
        spans = torch.relu(spans.long())
        widest = int((spans[:, :, 1] - spans[:, :, 0]).max()) + 1 if spans.numel() else 0
        if widest > self._max_span_width:
            raise ConfigurationError(
                f"span_ranking_coref: a span of {widest} words, over the model's "
                f"max_span_width={self._max_span_width}; give the reader and the model the "
                "same max_span_width"
            )
        # Shape: (batch_size, num_spans, span_dim)
        span_embeddings = torch.cat(
            [
                self._endpoint_span_extractor(contextual, spans, mask, span_mask),
                self._attended_heads(contextual, embedded, spans),
            ],
            dim=-1,
        )
        return spans, span_mask, span_embeddings

    def _prune(
        self,
        spans: torch.Tensor,
        span_mask: torch.Tensor,
        span_embeddings: torch.Tensor,
        mention_scores: torch.Tensor,
        word_counts: torch.Tensor,
    ) -> _KeptSpans:
        """The best-scoring spans, `spans_per_word` of each document's words (at most its
        number of spans), in document order."""
        num_kept = torch.minimum(
            torch.floor(word_counts.float() * self._spans_per_word).long().clamp(min=1),
            span_mask.sum(dim=1).clamp(min=1),
        )
        top_scores, top_mask, top_indices = util.masked_topk(
            cast(torch.FloatTensor, mention_scores),
            cast(torch.BoolTensor, span_mask),
            cast(torch.LongTensor, num_kept),
        )
        flat_top_indices = util.flatten_and_batch_shift_indices(top_indices, spans.size(1))
        return _KeptSpans(
            indices=top_indices,
            flat_indices=flat_top_indices,
            mask=top_mask,
            scores=top_scores,
            spans=_gather(spans, top_indices, flat_top_indices),
            embeddings=_gather(span_embeddings, top_indices, flat_top_indices),
        )

    def _nearest_antecedents(self, kept: _KeptSpans) -> _Antecedents:
        """Each kept span's antecedents: the `max_antecedents` kept spans just before it."""
        max_kept = kept.indices.size(1)
        num_antecedents = min(self._max_antecedents, max_kept)
        device = kept.indices.device
        offsets = torch.arange(1, num_antecedents + 1, device=device).unsqueeze(0)
        raw_indices = torch.arange(max_kept, device=device).unsqueeze(1) - offsets
        # Shape: (batch_size, max_kept, num_antecedents)
        antecedent_mask = (raw_indices >= 0).unsqueeze(0) & kept.mask.unsqueeze(-1)
        antecedent_indices = (
            raw_indices.clamp(min=0).unsqueeze(0).expand(kept.indices.size(0), -1, -1)
        )
        flat_antecedent_indices = util.flatten_and_batch_shift_indices(antecedent_indices, max_kept)
        return _Antecedents(
            offsets=offsets,
            indices=antecedent_indices,
            flat_indices=flat_antecedent_indices,
            mask=antecedent_mask,
        )

    def _coreference_scores(self, kept: _KeptSpans, antecedents: _Antecedents) -> torch.Tensor:
        """`s(i, j)` for each kept span and its antecedents, masked ones at the dtype's minimum,
        after a 0 for the dummy antecedent: `(batch_size, max_kept, 1 + num_antecedents)`."""
        antecedent_mention_scores = _gather(
            kept.scores.unsqueeze(-1), antecedents.indices, antecedents.flat_indices
        ).squeeze(-1)
        # Shape: (num_antecedents, feature_size), the same for every span
        distance = self._distance_embedding(
            util.bucket_values(
                antecedents.offsets.squeeze(0), num_total_buckets=self._num_distance_buckets
            )
        )
        pair_hidden = self._pair_layer(kept.embeddings, antecedents.indices, distance)
        pair_hidden = self._pair_dropout(torch.relu(pair_hidden))
        pair_scores = self._antecedent_scorer(self._antecedent_feedforward(pair_hidden))
        pair_scores = pair_scores.squeeze(-1)
        antecedent_scores = pair_scores + kept.scores.unsqueeze(-1) + antecedent_mention_scores
        antecedent_scores = util.replace_masked_values(
            antecedent_scores,
            cast(torch.BoolTensor, antecedents.mask),
            util.min_value_of_dtype(antecedent_scores.dtype),
        )
        # Shape: (batch_size, max_kept, 1 + num_antecedents); the dummy antecedent first.
        return torch.cat(
            [antecedent_scores.new_zeros(*antecedent_scores.shape[:2], 1), antecedent_scores],
            dim=-1,
        )

    def _attended_heads(
        self, contextual: torch.Tensor, embedded: torch.Tensor, spans: torch.Tensor
    ) -> torch.Tensor:
        """
        Each span's attention-weighted sum of its words' embeddings, the logits a linear
        function of the context layer's outputs (Lee et al. 2017's x^).

        Computed for every start and width at once, widening all spans a word at a time with
        a running (online) softmax: `width` steps over `(batch_size, num_words, embedding_dim)`
        tensors, where gathering each span's words (`util.batched_span_select`) would build
        `(batch_size, num_spans, max_span_width, embedding_dim)` ones, about `max_span_width`
        times the memory traffic on a CPU. The same function, to float32 rounding.
        """
        logits = self._head_attention(contextual).squeeze(-1).float()
        embedded = embedded.float()
        batch_size, num_words, embedding_dim = embedded.shape
        widths = spans[:, :, 1] - spans[:, :, 0]
        num_widths = int(widths.max()) + 1 if widths.numel() else 1
        running_max = logits
        normaliser = torch.ones_like(logits)
        weighted = embedded
        heads = [embedded]
        for width in range(1, num_widths):
            # The word `width` places after each start (zero past the end: spans never reach it).
            next_logits = torch.nn.functional.pad(logits[:, width:], (0, width))
            next_words = torch.nn.functional.pad(embedded[:, width:], (0, 0, 0, width))
            new_max = torch.maximum(running_max, next_logits)
            old_scale = torch.exp(running_max - new_max)
            new_scale = torch.exp(next_logits - new_max)
            normaliser = normaliser * old_scale + new_scale
            weighted = weighted * old_scale.unsqueeze(-1) + next_words * new_scale.unsqueeze(-1)
            running_max = new_max
            heads.append(weighted / normaliser.unsqueeze(-1))
        # Shape: (batch_size, num_widths * num_words, embedding_dim), width-major
        grid = torch.stack(heads, dim=1).view(batch_size, num_widths * num_words, embedding_dim)
        return _gather(grid, widths * num_words + spans[:, :, 0])

    def _update_metrics(self, output: Dict[str, Any], metadata: List[Dict[str, Any]]) -> None:
        predicted = decode_clusters(
            output["top_spans"], output["antecedent_indices"], output["predicted_antecedents"]
        )
        gold = [
            [[tuple(m) for m in cluster] for cluster in entry["clusters"]] for entry in metadata
        ]
        self._conll_scores(predicted, gold)
        kept = [
            [tuple(span) for span in spans if span[0] >= 0]
            for spans in output["top_spans"].tolist()
        ]
        self._mention_recall(kept, gold)

    @overrides(check_signature=False)
    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds `clusters`: for each document, its predicted clusters, each a list of
        inclusive `[start, end]` word positions, in document order."""
        clusters = decode_clusters(
            output_dict["top_spans"],
            output_dict["antecedent_indices"],
            output_dict["predicted_antecedents"],
        )
        output_dict["clusters"] = [
            [[list(mention) for mention in cluster] for cluster in document]
            for document in clusters
        ]
        return output_dict

    @overrides
    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {
            **self._conll_scores.get_metric(reset),
            **self._mention_recall.get_metric(reset),
            **elmo_layer_weight_metrics(self),
        }


def _gather(
    target: torch.Tensor, indices: torch.Tensor, flat_indices: Optional[torch.Tensor] = None
) -> torch.Tensor:
    """`util.batched_index_select`, the index tensors typed as its signature has them."""
    return util.batched_index_select(
        target, cast(torch.LongTensor, indices), cast(Optional[torch.LongTensor], flat_indices)
    )


def _loss(
    coreference_scores: torch.Tensor,
    span_labels: torch.Tensor,
    kept: _KeptSpans,
    antecedents: _Antecedents,
) -> torch.Tensor:
    """The negative marginal log-likelihood of each kept span's gold antecedents: its candidates
    in its gold cluster, or the dummy when there are none."""
    top_labels = _gather(span_labels.unsqueeze(-1), kept.indices, kept.flat_indices)
    antecedent_labels = _gather(top_labels, antecedents.indices, antecedents.flat_indices).squeeze(
        -1
    )
    top_labels = top_labels.squeeze(-1)
    gold = (antecedent_labels == top_labels.unsqueeze(-1)) & (top_labels >= 0).unsqueeze(-1)
    gold = gold & antecedents.mask
    # The dummy is the gold antecedent of a span without one in its cluster.
    gold = torch.cat([~gold.any(dim=-1, keepdim=True), gold], dim=-1)
    return -marginal_log_likelihood(coreference_scores, gold, kept.mask)


def marginal_log_likelihood(
    scores: torch.Tensor, gold: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """
    The sum over the (unmasked) spans of the log of the probability their antecedent
    distribution gives their gold antecedents together (Lee et al. 2017's objective).

    # Parameters

    scores : `torch.Tensor`
        `(batch_size, num_spans, num_candidates)` antecedent scores, the dummy's included.
    gold : `torch.BoolTensor`
        Like `scores`: which candidates are gold antecedents (at least one a span).
    mask : `torch.BoolTensor`
        `(batch_size, num_spans)`: the spans that count.
    """
    log_probs = torch.log_softmax(scores.float(), dim=-1)
    gold_log_probs = util.replace_masked_values(
        log_probs, cast(torch.BoolTensor, gold), util.min_value_of_dtype(log_probs.dtype)
    )
    return (torch.logsumexp(gold_log_probs, dim=-1) * mask.float()).sum()


def decode_clusters(
    top_spans: torch.Tensor, antecedent_indices: torch.Tensor, predicted_antecedents: torch.Tensor
) -> List[List[List[Span]]]:
    """
    The clusters that the predicted antecedent links make, for each document of a batch: a
    kept span linked to an antecedent joins the antecedent's cluster (a span linked to none
    starts no cluster, so there are no singletons). Clusters are in the order of their first
    mention, each cluster's mentions in document order.

    # Parameters

    top_spans : `torch.Tensor`
        `(batch_size, num_kept, 2)`, -1 for padding.
    antecedent_indices : `torch.Tensor`
        `(batch_size, num_kept, num_antecedents)`, indices into `top_spans`.
    predicted_antecedents : `torch.Tensor`
        `(batch_size, num_kept)`, an index into the span's `antecedent_indices`, -1 for none.
    """
    documents = []
    for spans, candidates, predicted in zip(
        top_spans.tolist(), antecedent_indices.tolist(), predicted_antecedents.tolist()
    ):
        cluster_of: Dict[Span, int] = {}
        clusters: List[List[Span]] = []
        for index, choice in enumerate(predicted):
            if choice < 0:
                continue
            antecedent: Span = (
                spans[candidates[index][choice]][0],
                spans[candidates[index][choice]][1],
            )
            mention: Span = (spans[index][0], spans[index][1])
            if antecedent[0] < 0 or mention[0] < 0 or candidates[index][choice] >= index:
                raise ValueError(
                    f"span {index} links to antecedent {candidates[index][choice]}, which is "
                    "padding or not before it"
                )
            if antecedent not in cluster_of:
                cluster_of[antecedent] = len(clusters)
                clusters.append([antecedent])
            cluster_of[mention] = cluster_of[antecedent]
            clusters[cluster_of[antecedent]].append(mention)
        ordered = [sorted(cluster) for cluster in clusters]
        documents.append(sorted(ordered, key=lambda cluster: cluster[0]))
    return documents
