"""
The token layer of the ONNX graph (`graph.build_model`): the graph's inputs, the sentence
markers, and each distinct token encoded once (`Unique`) by the character CNN, highway layers
and projection, for a bilm-tf biLM (`ElmoCharacterEncoder`) and an ELMoForManyLangs one
(`EfmlTokenEncoder`, whose word embedding joins the highway output before the projection).
Imported only where `onnx` is installed (`export` checks).
"""

from __future__ import annotations

from typing import Iterable, List, NamedTuple, Sequence, Tuple

import numpy
import torch

try:
    from onnx import TensorProto, ValueInfoProto, helper
except ImportError:  # the `onnx` extra: `export` names it when an export is asked for.
    pass  # Importing this module must still work (`--include-package` imports every module).

from elmo_plugin.elmo.bilm.characters.encoder import ElmoCharacterEncoder, weight_and_bias
from elmo_plugin.elmo.bilm.characters.ids import (
    BEGINNING_OF_SENTENCE_CHARACTERS,
    END_OF_SENTENCE_CHARACTERS,
    PADDING_CHARACTER,
)
from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.formats.efml.model import EfmlBiLm
from elmo_plugin.elmo.formats.efml.token_encoder import EfmlTokenEncoder
from elmo_plugin.elmo.formats.onnx.efml import onnx_inputs
from elmo_plugin.elmo.formats.onnx.names import INPUT_NAME, WORD_IDS_NAME
from elmo_plugin.elmo.formats.onnx.nodes import Graph, array, linear, marked_ids

_ONNX_ACTIVATIONS = {"relu": "Relu", "tanh": "Tanh"}


class TokenLayer(NamedTuple):
    """The graph's inputs and, with the sentence markers, the `(batch, steps, projection_dim)`
    token encodings (zero where the mask is false), the `(batch, steps)` mask and the `(batch,
    1)` lengths."""

    inputs: List[ValueInfoProto]
    tokens: str
    mask: str
    lengths: str


class CharacterCnn(NamedTuple):
    """What the character CNN and highway layers need of a token encoder."""

    embedding: torch.Tensor
    # Subtracted from an id to give its embedding row: bilm-tf's table has a row for 0.
    id_offset: int
    padding: int
    convolutions: Iterable[torch.nn.Module]
    activation: str
    highway_layers: Iterable[torch.nn.Module]


def token_layer(graph: Graph, bilm: ElmoBiLm) -> TokenLayer:
    if isinstance(bilm, EfmlBiLm):
        return _efml_token_layer(graph, bilm)
    return _bilm_tf_token_layer(graph, bilm.character_encoder)


def _ids_input(name: str, shape: Sequence) -> ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.INT64, list(shape))


def _bilm_tf_token_layer(graph: Graph, encoder: ElmoCharacterEncoder) -> TokenLayer:
    begin, end = (
        numpy.array(characters) + 1
        for characters in (BEGINNING_OF_SENTENCE_CHARACTERS, END_OF_SENTENCE_CHARACTERS)
    )
    marked, mask, lengths = marked_ids(graph, INPUT_NAME, begin, end)
    distinct, occurrences = _distinct_rows(graph, marked, len(begin))
    cnn = CharacterCnn(
        encoder.char_embedding,
        0,
        PADDING_CHARACTER + 1,
        encoder.convolutions,
        encoder.activation,
        encoder.highways.layers,
    )
    features = character_features(graph, cnn, distinct)
    projected = linear(graph, features, encoder.projection.weight, encoder.projection.bias)
    tokens = _in_place(graph, projected, occurrences, marked, mask, encoder.projection_dim)
    width = encoder.max_characters_per_token
    return TokenLayer([_ids_input(INPUT_NAME, ["batch", "tokens", width])], tokens, mask, lengths)


def _efml_token_layer(graph: Graph, bilm: EfmlBiLm) -> TokenLayer:
    """`EfmlTokenEncoder.forward`: the word id, where the model has words, is one more column of
    each row while the markers are added and the rows deduplicated."""
    encoder: EfmlTokenEncoder = bilm.character_encoder  # type: ignore[assignment]
    width = encoder.max_characters_per_token
    has_words = encoder.word_embedding.size(0) > 0
    markers = onnx_inputs(numpy.stack([row.numpy() for row in bilm.ids.markers()]), width)
    rows = markers["character_ids"]
    inputs = [_ids_input(INPUT_NAME, ["batch", "tokens", width])]
    ids = INPUT_NAME
    if has_words:
        rows = numpy.concatenate([rows, markers["word_ids"][:, None]], axis=1)
        inputs.append(_ids_input(WORD_IDS_NAME, ["batch", "tokens"]))
        word_column = graph.op("Unsqueeze", WORD_IDS_NAME, graph.ints(2))
        ids = graph.op("Concat", INPUT_NAME, word_column, axis=2)
    marked, mask, lengths = marked_ids(graph, ids, rows[0], rows[1])
    distinct, occurrences = _distinct_rows(graph, marked, rows.shape[1])
    # The loader sets the architecture's default activation where the JSON names none.
    activation = bilm.architecture["token_embedder"]["activation"]
    cnn = CharacterCnn(
        encoder.char_embedding,
        1,
        encoder.padding_character,
        encoder.convolutions,
        activation,
        encoder.highways.layers,
    )
    characters = _columns(graph, distinct, 0, width)
    features = character_features(graph, cnn, characters)
    if has_words:
        words = graph.op("Squeeze", _columns(graph, distinct, width, width + 1), graph.ints(1))
        table = graph.constant("word_embedding", array(encoder.word_embedding))
        embedded = graph.op("Gather", table, _embedding_rows(graph, words, 1))
        features = graph.op("Concat", embedded, features, axis=1)
    projected = linear(graph, features, encoder.projection.weight, encoder.projection.bias)
    tokens = _in_place(graph, projected, occurrences, marked, mask, encoder.projection_dim)
    return TokenLayer(inputs, tokens, mask, lengths)


def _columns(graph: Graph, rows: str, start: int, stop: int) -> str:
    return graph.op("Slice", rows, graph.ints(start), graph.ints(stop), graph.ints(1))


def _embedding_rows(graph: Graph, ids: str, offset: int) -> str:
    """The embedding rows of `ids`, the padding of positions past a sentence's end (masked
    later) taken as row 0."""
    if offset == 0:
        return ids
    return graph.op("Max", graph.op("Sub", ids, graph.ints(offset)), graph.ints(0))


def _distinct_rows(graph: Graph, marked: str, width: int) -> Tuple[str, str]:
    """The distinct `(n, width)` rows of `(batch, steps, width)` ids, and the index of each
    position's row among them; padding is one row, and the CNN is most of the work."""
    flat = graph.op("Reshape", marked, graph.ints(-1, width))
    distinct, _, occurrences, _ = graph.ops("Unique", 4, flat, axis=0, sorted=0)
    return distinct, occurrences


def _in_place(
    graph: Graph, encoded: str, occurrences: str, marked: str, mask: str, dim: int
) -> str:
    """`(batch, steps, dim)`: each position's row of the distinct rows' encodings, zero where
    `mask` is false."""
    shape = graph.op("Concat", graph.op("Shape", marked, start=0, end=2), graph.ints(dim), axis=0)
    tokens = graph.op("Reshape", graph.op("Gather", encoded, occurrences), shape)
    return graph.op("Where", graph.op("Unsqueeze", mask, graph.ints(2)), tokens, graph.scalar(0.0))


def character_features(graph: Graph, cnn: CharacterCnn, rows: str) -> str:
    """The highway output for `(n, characters)` id rows: `ElmoCharacterEncoder._encode` before
    its projection, its padding trimmed first (`_trim_padding`)."""
    widest = max(weight_and_bias(convolution)[0].size(-1) for convolution in cnn.convolutions)
    trimmed = _trim_padding(graph, rows, cnn.padding, widest)
    embedded = graph.op(
        "Gather",
        graph.constant("char_embedding", array(cnn.embedding)),
        _embedding_rows(graph, trimmed, cnn.id_offset),
    )
    channels = graph.op("Transpose", embedded, perm=[0, 2, 1])
    pooled = []
    for convolution in cnn.convolutions:
        weight, bias = weight_and_bias(convolution)
        features = graph.op(
            "Conv",
            channels,
            graph.constant("conv", array(weight)),
            graph.constant("conv_bias", array(bias)),
        )
        maxima = graph.op("ReduceMax", features, axes=[2], keepdims=0)
        pooled.append(graph.op(_ONNX_ACTIVATIONS[cnn.activation], maxima))
    current = graph.op("Concat", *pooled, axis=1)
    for layer in cnn.highway_layers:
        projected = linear(graph, current, *weight_and_bias(layer))
        nonlinear, gate = graph.ops("Split", 2, projected, axis=1)
        gate = graph.op("Sigmoid", gate)
        carried = graph.op("Mul", gate, current)
        transformed = graph.op(
            "Mul", graph.op("Sub", graph.scalar(1.0), gate), graph.op("Relu", nonlinear)
        )
        current = graph.op("Add", carried, transformed)
    return current


def _trim_padding(graph: Graph, rows: str, padding: int, widest_filter: int) -> str:
    """`CachingTokenEncoder.trim_padding`: the character positions up to the last that is
    neither `padding` nor 0 (the rows of positions past a sentence's end, whose encodings are
    masked) in any row, and one window of the widest filter more."""
    real = graph.op(
        "And",
        graph.op("Not", graph.op("Equal", rows, graph.ints(padding))),
        graph.op("Greater", rows, graph.ints(0)),
    )
    used = graph.op("ReduceMax", graph.op("Cast", real, to=TensorProto.INT64), axes=[0])
    width = graph.op("Shape", rows, start=1, end=2)
    numbers = graph.op(
        "Range", graph.one(), graph.op("Add", graph.op("Squeeze", width), graph.one()), graph.one()
    )
    last = graph.op("ReduceMax", graph.op("Mul", used, numbers), keepdims=1, axes=[1])
    keep = graph.op(
        "Min",
        graph.op("Add", graph.op("Reshape", last, graph.ints(1)), graph.ints(widest_filter)),
        width,
    )
    return graph.op("Slice", rows, graph.ints(0), keep, graph.ints(1))
