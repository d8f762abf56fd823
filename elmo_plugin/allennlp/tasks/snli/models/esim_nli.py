from typing import Any, Dict, List, Optional, Tuple, Union, cast

import torch
from allennlp.common import Lazy
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.input_variational_dropout import InputVariationalDropout
from allennlp.modules.matrix_attention import DotProductMatrixAttention, MatrixAttention
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
from elmo_plugin.allennlp.modules import Elmo
from elmo_plugin.allennlp.tasks.elmo_places import ElmoPlaces
from elmo_plugin.allennlp.tasks.float32_embedding import embed_in_float32
from elmo_plugin.allennlp.tasks.input_sizes import construct_with_input_dim
from elmo_plugin.allennlp.tasks.predicted_labels import predicted_labels


@Model.register("esim_nli")
class EsimNli(Model):
    """
    The Enhanced Sequential Inference Model (ESIM, Chen et al. 2017) for natural language
    inference, with ELMo at its input, its output, or both (Peters et al. 2018, Table 3).

    Both sentences are embedded and encoded by the input encoder; a dot-product soft
    alignment attends each to the other; each token's encoding `a` and its aligned
    counterpart `b` are enhanced to `[a; b; a - b; a * b]`, projected, and composed by the
    inference encoder; max and average pooling over both sentences feed the classifier.

    ELMo follows the BCN pattern (`ElmoPlaces`): the `elmo_characters` ids under the text
    field key `"elmo"` are left out of what the `text_field_embedder` sees, the biLM runs once
    per sentence, and its representations are concatenated to the word embeddings (input) and
    to the input encoder's output (output). With both, representation 0 is the input's and 1
    the output's.

    Registered as a `Model` with name "esim_nli".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        Embeds every indexer of both sentences but `"elmo"`.
    encoder : `Lazy[Seq2SeqEncoder]` (or a built `Seq2SeqEncoder`)
        The input encoder (a biLSTM in ESIM), built with its input size (`input_size` of an
        `lstm`) set to the embedder's output size plus, with `use_input_elmo`, the ELMo
        size.
    projection_feedforward : `Lazy[FeedForward]` (or a built `FeedForward`)
        Projects the enhanced `[a; b; a - b; a * b]` vectors before composition; built with
        `input_dim` = 4 * (the encoder's output size plus, with `use_output_elmo`, the ELMo
        size).
    inference_encoder : `Lazy[Seq2SeqEncoder]` (or a built `Seq2SeqEncoder`)
        The composition encoder (a biLSTM in ESIM), built with its input size =
        `projection_feedforward`'s output size.
    output_feedforward : `Lazy[FeedForward]` (or a built `FeedForward`)
        Hidden layers on the pooled `[avg_p; max_p; avg_h; max_h]` vector, built with
        `input_dim` = 4 * `inference_encoder`'s output size; a linear layer to the labels
        follows.
    matrix_attention : `MatrixAttention`, optional (default = `DotProductMatrixAttention()`)
        The soft alignment between the encoded sentences.
    elmo : `Elmo`, optional
        Its `num_output_representations` must equal the number of ELMo places switched on.
        Its output size sets the sizes of `encoder` and `projection_feedforward`, so a config
        leaves those out and another biLM needs only its `options_file` and `weight_file`; a
        size the config gives, or a built module's, must equal the computed one.
    use_input_elmo : `bool`, optional (default = `False`)
        Concatenate an ELMo representation to the word embeddings.
    use_output_elmo : `bool`, optional (default = `False`)
        Concatenate an ELMo representation to the input encoder's output.
    dropout : `float`, optional (default = `0.5`)
        Variational dropout before both encoders and dropout before `output_feedforward`.
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional (default = `InitializerApplicator()`)
    **kwargs
        Passed to `Model` (e.g. `regularizer`).
    """

    default_predictor = "nli_pair"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Union[Lazy[Seq2SeqEncoder], Seq2SeqEncoder],
        projection_feedforward: Union[Lazy[FeedForward], FeedForward],
        inference_encoder: Union[Lazy[Seq2SeqEncoder], Seq2SeqEncoder],
        output_feedforward: Union[Lazy[FeedForward], FeedForward],
        matrix_attention: Optional[MatrixAttention] = None,
        elmo: Optional[Elmo] = None,
        use_input_elmo: bool = False,
        use_output_elmo: bool = False,
        dropout: float = 0.5,
        label_namespace: str = "labels",
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._elmo_places = ElmoPlaces("esim_nli", elmo, use_input_elmo, use_output_elmo)
        self._text_field_embedder = text_field_embedder
        embedding_dim = text_field_embedder.get_output_dim() + self._elmo_places.input_dim
        self._encoder = construct_with_input_dim(
            encoder, embedding_dim, "encoder", "embedding dim (+ ELMo at the input)"
        )
        self._matrix_attention = matrix_attention or DotProductMatrixAttention()
        encoding_dim = self._encoder.get_output_dim() + self._elmo_places.output_dim
        self._projection_feedforward = construct_with_input_dim(
            projection_feedforward,
            4 * encoding_dim,
            "projection_feedforward",
            "4 * (encoder output dim + ELMo at the output)",
        )
        self._inference_encoder = construct_with_input_dim(
            inference_encoder,
            self._projection_feedforward.get_output_dim(),
            "inference_encoder",
            "projection_feedforward output dim",
        )
        self._output_feedforward = construct_with_input_dim(
            output_feedforward,
            4 * self._inference_encoder.get_output_dim(),
            "output_feedforward",
            "4 * inference_encoder output dim (average and max of both sentences)",
        )
        self._elmo = elmo
        self._rnn_input_dropout = InputVariationalDropout(dropout)
        self._output_dropout = torch.nn.Dropout(dropout)
        self._label_namespace = label_namespace
        num_labels = vocab.get_vocab_size(label_namespace)
        self._classification_layer = torch.nn.Linear(
            self._output_feedforward.get_output_dim(), num_labels
        )
        self._accuracy = CategoricalAccuracy()
        self._loss = torch.nn.CrossEntropyLoss()
        initializer(self)

    @overrides(check_signature=False)
    def forward(
        self,
        premise: TextFieldTensors,
        hypothesis: TextFieldTensors,
        label: Optional[torch.IntTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Returns

        `label_logits` and `label_probs` `(batch_size, num_labels)`, and `loss` when
        `label` is given.
        """
        encoded_premise, premise_mask = self._encode(premise)
        encoded_hypothesis, hypothesis_mask = self._encode(hypothesis)
        similarity = self._matrix_attention(encoded_premise, encoded_hypothesis)
        aligned_hypothesis = weighted_sum(
            encoded_hypothesis, masked_softmax(similarity, hypothesis_mask)
        )
        aligned_premise = weighted_sum(
            encoded_premise, masked_softmax(similarity.transpose(1, 2).contiguous(), premise_mask)
        )
        pooled = torch.cat(
            [
                self._compose_and_pool(encoded_premise, aligned_hypothesis, premise_mask),
                self._compose_and_pool(encoded_hypothesis, aligned_premise, hypothesis_mask),
            ],
            dim=-1,
        )
        hidden = self._output_feedforward(self._output_dropout(pooled))
        logits = self._classification_layer(hidden)
        output = {"label_logits": logits, "label_probs": torch.softmax(logits, dim=-1)}
        if label is not None:
            output["loss"] = self._loss(logits, label.long().view(-1))
            self._accuracy(logits, label)
        if metadata is not None:
            output["premise_tokens"] = [m["premise_tokens"] for m in metadata]
            output["hypothesis_tokens"] = [m["hypothesis_tokens"] for m in metadata]
        return output

    def _encode(self, tokens: TextFieldTensors) -> Tuple[torch.Tensor, torch.BoolTensor]:
        mask = get_text_field_mask(tokens)
        elmo = self._elmo_places(tokens)
        embedded = embed_in_float32(self._text_field_embedder, elmo.text)
        if elmo.input is not None:
            embedded = torch.cat([embedded, elmo.input], dim=-1)
        encoded = self._encoder(self._rnn_input_dropout(embedded), mask)
        if elmo.output is not None:
            encoded = torch.cat([encoded, elmo.output], dim=-1)
        return encoded, mask

    def _compose_and_pool(
        self, encoded: torch.Tensor, aligned: torch.Tensor, mask: torch.BoolTensor
    ) -> torch.Tensor:
        enhanced = torch.cat([encoded, aligned, encoded - aligned, encoded * aligned], dim=-1)
        projected = self._projection_feedforward(enhanced)
        composed = self._inference_encoder(self._rnn_input_dropout(projected), mask)
        time_mask = cast(torch.BoolTensor, mask.unsqueeze(-1))  # bool, typed Tensor by torch
        return torch.cat(
            [masked_mean(composed, time_mask, dim=1), masked_max(composed, time_mask, dim=1)],
            dim=-1,
        )

    @overrides(check_signature=False)
    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds the predicted `label` and `probabilities`, a dict from label to probability."""
        output_dict["label"], output_dict["probabilities"] = predicted_labels(
            self.vocab, self._label_namespace, output_dict["label_probs"]
        )
        return output_dict

    @overrides
    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self._accuracy.get_metric(reset), **elmo_layer_weight_metrics(self)}
