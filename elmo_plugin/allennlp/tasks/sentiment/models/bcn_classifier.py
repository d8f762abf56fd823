from typing import Any, Dict, List, Optional, Union, cast

import torch
from allennlp.common import Lazy
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import FeedForward, Maxout, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import (
    get_text_field_mask,
    masked_max,
    masked_mean,
    masked_softmax,
    weighted_sum,
)
from allennlp.training.metrics import CategoricalAccuracy
from overrides import overrides

from elmo_plugin.elmo import elmo_layer_weight_metrics
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.modules import Elmo
from elmo_plugin.allennlp.tasks.elmo_places import ElmoPlaces
from elmo_plugin.allennlp.tasks.float32_embedding import embed_in_float32
from elmo_plugin.allennlp.tasks.input_sizes import construct_with_input_dim
from elmo_plugin.allennlp.tasks.predicted_labels import predicted_labels


@Model.register("bcn_classifier")
class BcnClassifier(Model):
    """
    The Biattentive Classification Network (BCN, McCann et al. 2017, section 5) for sentence
    classification, with ELMo at its input, at the output of its integrator, or both (Peters
    et al. 2018, section 5.1: SST-5 with ELMo at both).

    The design is allennlp-models' `bcn`: the tokens are embedded, dropped and run through
    `pre_encode_feedforward` and the `encoder`; biattention of the encoding `X` with itself
    (`A = softmax(X X^T)`, `C = A X`) gives the integrator's input `[X; X - C; X * C]`; the
    `integrator`'s output, with ELMo concatenated when `use_integrator_output_elmo`, is pooled
    by max, min, mean and self-attention (a linear score per token); the pooled vector is
    dropped and classified by the `output_layer`.

    What ours differs in or adds, against `bcn`:
    - Sizes: every layer's input size is set from the embedders, the ELMo module and the layer
      before (`construct_with_input_dim`), so a config states none and another biLM is an
      override of the ELMo files only; `bcn` checks sizes the config must state.
    - The `output_layer` is the hidden maxout layers (`bcn` also takes a `FeedForward`); a
      linear layer to the labels follows, sized from the vocabulary, where `bcn`'s last
      maxout layer outputs the classes, so the config never states the number of
      labels (the same config serves 5, 3 or 2 classes).
    - Min and mean pooling are masked (`bcn`'s mean divides the sum over the padded positions
      too, which is exact only while those positions are zero).
    - ELMo follows `ElmoPlaces` (one biLM run per batch; the caller's batch is never changed,
      where `bcn` pops the "elmo" ids and puts them back) and the embeddings are computed in
      float32 under AMP (`embed_in_float32`).
    - `make_output_human_readable` gives `probabilities`, a dict from label to probability,
      besides `label`; `get_metrics` reports the ELMo layer weights. `bcn`'s `accuracy3`
      (top-3) is left out.
    - A `text_field_embedder` with no token embedders is allowed only with ELMo at the input
      (ELMo alone), as in `bcn`.
    - Phrases in context: given `elmo_context` and `phrase_span` (`sst_trees`'
      `phrases_in_context`), ELMo runs on the phrase's sentence and the phrase's rows of it
      are the phrase's ELMo, as a sentence's are at test time.

    Registered as a `Model` with name "bcn_classifier".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        Embeds every indexer of the text field but `"elmo"` (the ELMo module's).
    pre_encode_feedforward : `Lazy[FeedForward]` (or a built `FeedForward`)
        Built with `input_dim` = the embedder's output size plus, with `use_input_elmo`, the
        ELMo size.
    encoder : `Lazy[Seq2SeqEncoder]` (or built)
        A biLSTM in BCN; input size = `pre_encode_feedforward`'s output size.
    integrator : `Lazy[Seq2SeqEncoder]` (or built)
        A biLSTM in BCN; input size = 3 * the encoder's output size.
    output_layer : `Lazy[Maxout]` (or a built `Maxout`)
        Input size = 4 * (the integrator's output size plus, with
        `use_integrator_output_elmo`, the ELMo size).
    elmo : `Elmo`, optional
        Its `num_output_representations` must equal the number of ELMo places switched on
        (representation 0 is the input's, the next the integrator output's).
    use_input_elmo : `bool`, optional (default = `False`)
    use_integrator_output_elmo : `bool`, optional (default = `False`)
    embedding_dropout : `float`, optional (default = `0.5`)
        Dropout on the embeddings (ELMo at the input included).
    integrator_dropout : `float`, optional (default = `0.1`)
        Dropout on the pooled vector.
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional (default = `InitializerApplicator()`)
    **kwargs
        Passed to `Model` (e.g. `regularizer`).
    """

    default_predictor = "sentence_sentiment"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        pre_encode_feedforward: Union[Lazy[FeedForward], FeedForward],
        encoder: Union[Lazy[Seq2SeqEncoder], Seq2SeqEncoder],
        integrator: Union[Lazy[Seq2SeqEncoder], Seq2SeqEncoder],
        output_layer: Union[Lazy[Maxout], Maxout],
        elmo: Optional[Elmo] = None,
        use_input_elmo: bool = False,
        use_integrator_output_elmo: bool = False,
        embedding_dropout: float = 0.5,
        integrator_dropout: float = 0.1,
        label_namespace: str = "labels",
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._elmo_places = ElmoPlaces(
            "bcn_classifier", elmo, use_input_elmo, use_integrator_output_elmo
        )
        self._elmo = elmo
        self._text_field_embedder = text_field_embedder
        embedding_dim = text_field_embedder.get_output_dim() + self._elmo_places.input_dim
        if embedding_dim == 0:
            raise ConfigurationError(
                "bcn_classifier: the text_field_embedder has no output and use_input_elmo is "
                "false: give it a token embedder, or use ELMo at the input"
            )
        self._pre_encode_feedforward = construct_with_input_dim(
            pre_encode_feedforward,
            embedding_dim,
            "pre_encode_feedforward",
            "embedding dim (+ ELMo at the input)",
        )
        self._encoder = construct_with_input_dim(
            encoder,
            self._pre_encode_feedforward.get_output_dim(),
            "encoder",
            "pre_encode_feedforward output dim",
        )
        self._integrator = construct_with_input_dim(
            integrator,
            3 * self._encoder.get_output_dim(),
            "integrator",
            "3 * encoder output dim (the encoding, its difference and product with its "
            "biattention)",
        )
        integrated_dim = self._integrator.get_output_dim() + self._elmo_places.output_dim
        self._self_attentive_pooling_projection = torch.nn.Linear(integrated_dim, 1)
        self._output_layer = construct_with_input_dim(
            output_layer,
            4 * integrated_dim,
            "output_layer",
            "4 * (integrator output dim + ELMo at the output) (max, min, mean and self-attentive "
            "pooling)",
        )
        self._embedding_dropout = torch.nn.Dropout(embedding_dropout)
        self._integrator_dropout = torch.nn.Dropout(integrator_dropout)
        self._label_namespace = label_namespace
        self._classification_layer = torch.nn.Linear(
            self._output_layer.get_output_dim(), vocab.get_vocab_size(label_namespace)
        )
        self._accuracy = CategoricalAccuracy()
        self._loss = torch.nn.CrossEntropyLoss()
        initializer(self)

    @overrides(check_signature=False)
    def forward(
        self,
        tokens: TextFieldTensors,
        label: Optional[torch.IntTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
        elmo_context: Optional[TextFieldTensors] = None,
        phrase_span: Optional[torch.LongTensor] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        elmo_context : `TextFieldTensors`, optional
            The ELMo ids of each phrase's sentence; ELMo of the phrase is then its
            `phrase_span` `(batch_size, 2)` (inclusive) of ELMo of the sentence.

        # Returns

        `logits` and `class_probabilities` `(batch_size, num_labels)`, `loss` when `label` is
        given, and the `tokens` (words) when `metadata` is.
        """
        mask = get_text_field_mask(tokens)
        elmo = self._elmo_places(tokens, elmo_context, phrase_span)
        pieces = []
        if elmo.text:
            pieces.append(embed_in_float32(self._text_field_embedder, elmo.text))
        if elmo.input is not None:
            pieces.append(elmo.input)
        embedded = torch.cat(pieces, dim=-1)
        pre_encoded = self._pre_encode_feedforward(self._embedding_dropout(embedded))
        encoded = self._encoder(pre_encoded, mask)

        # Biattention of the encoding with itself.
        attention = masked_softmax(encoded.bmm(encoded.transpose(1, 2).contiguous()), mask)
        attended = weighted_sum(encoded, attention)
        integrator_input = torch.cat([encoded, encoded - attended, encoded * attended], dim=-1)
        integrated = self._integrator(integrator_input, mask)
        if elmo.output is not None:
            integrated = torch.cat([integrated, elmo.output], dim=-1)

        time_mask = cast(torch.BoolTensor, mask.unsqueeze(-1))  # bool, typed Tensor by torch
        self_attention = masked_softmax(
            self._self_attentive_pooling_projection(integrated).squeeze(-1), mask
        )
        pooled = torch.cat(
            [
                masked_max(integrated, time_mask, dim=1),
                -masked_max(-integrated, time_mask, dim=1),
                masked_mean(integrated, time_mask, dim=1),
                weighted_sum(integrated, self_attention),
            ],
            dim=-1,
        )
        hidden = self._output_layer(self._integrator_dropout(pooled))
        logits = self._classification_layer(hidden)
        output = {"logits": logits, "class_probabilities": torch.softmax(logits, dim=-1)}
        if label is not None:
            output["loss"] = self._loss(logits, label.long().view(-1))
            self._accuracy(logits, label)
        if metadata is not None:
            output["tokens"] = [m["words"] for m in metadata]
        return output

    @overrides(check_signature=False)
    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds the predicted `label` and `probabilities`, a dict from label to probability."""
        output_dict["label"], output_dict["probabilities"] = predicted_labels(
            self.vocab, self._label_namespace, output_dict["class_probabilities"]
        )
        return output_dict

    @overrides
    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self._accuracy.get_metric(reset), **elmo_layer_weight_metrics(self)}
