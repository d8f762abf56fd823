from typing import Any, Dict, List, Optional, Union

import torch
from allennlp.common import Lazy
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder, TimeDistributed
from allennlp.nn import InitializerApplicator, RegularizerApplicator
from allennlp.nn.util import get_text_field_mask, sequence_cross_entropy_with_logits
from overrides import overrides

from elmo_plugin.elmo import elmo_layer_weight_metrics
from elmo_plugin.allennlp.tasks.input_sizes import construct_with_input_dim
from elmo_plugin.allennlp.tasks.srl.label_modes import label_mode as label_mode_named
from elmo_plugin.allennlp.tasks.float32_embedding import embed_in_float32


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
        `"span"` or `"head"` (see `elmo_plugin.allennlp.tasks.srl.label_modes`), as the dataset
        reader's `label_mode`.
    label_namespace : `str`, optional (default = `"span_labels"` or `"head_labels"`)
        As the dataset reader's.
    embedding_dropout : `float`, optional (default = `0.0`)
        Dropout on the concatenated token and predicate embeddings.
    initializer : `InitializerApplicator`, optional
        He et al. initialise the LSTM weights orthogonally.
    regularizer : `RegularizerApplicator`, optional
    """

    # Buffers registered in `__init__`, declared for the type checker.
    _transitions: torch.Tensor
    _start_transitions: torch.Tensor

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
        self._label_mode = label_mode_named(label_mode)
        self._label_namespace = self._label_mode.namespace(label_namespace)
        self._label_mode.check_vocabulary(vocab, self._label_namespace)
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
        num_tags = vocab.get_vocab_size(self._label_namespace)
        self._tag_projection = TimeDistributed(torch.nn.Linear(encoder.get_output_dim(), num_tags))
        labels = vocab.get_index_to_token_vocabulary(self._label_namespace)
        transitions, start = self._label_mode.transition_constraints(labels)
        self._metric = self._label_mode.metric(vocab, self._label_namespace)
        # Buffers, not parameters: saved with the model, moved with it, never trained.
        self.register_buffer("_transitions", transitions, persistent=False)
        self.register_buffer("_start_transitions", start, persistent=False)
        initializer(self)

    @overrides(check_signature=False)
    def forward(
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
            self._label_mode.check_instances(metadata[0].get("label_mode"))
        mask = get_text_field_mask(tokens)
        embedded = torch.cat(
            [
                embed_in_float32(self._text_field_embedder, tokens),
                self._predicate_embedding(predicate_indicator),
            ],
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
            self._metric(predicted_tag_ids, class_probabilities, tags, mask, predicate_indicator)
        if metadata is not None:
            output["words"] = [instance["words"] for instance in metadata]
            output["predicate_index"] = [instance["predicate_index"] for instance in metadata]
        return output

    def _decode(self, class_probabilities: torch.Tensor, mask: torch.BoolTensor) -> List[List[int]]:
        lengths = mask.sum(dim=-1).tolist()
        log_probabilities = torch.log(class_probabilities.detach() + 1e-12)
        return [
            self._label_mode.decode(sequence[:length], self._transitions, self._start_transitions)
            for sequence, length in zip(log_probabilities, lengths)
        ]

    def _tag_strings(self, tag_ids: List[int]) -> List[str]:
        return [self.vocab.get_token_from_index(i, self._label_namespace) for i in tag_ids]

    @overrides(check_signature=False)
    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds `"tags"`: the decoded tag strings of each instance."""
        output_dict["tags"] = [self._tag_strings(ids) for ids in output_dict["predicted_tag_ids"]]
        return output_dict

    @overrides
    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = self._metric.get_metric(reset=reset)
        metrics.update(elmo_layer_weight_metrics(self))
        return metrics

    default_predictor = "deep_srl"
