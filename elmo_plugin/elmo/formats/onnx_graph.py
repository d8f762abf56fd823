"""
The ONNX graph of an `ElmoBiLm`, written node by node with `onnx.helper` (docs/elmo.md says why
not through `torch.onnx`): the sentence markers added as `ElmoCharacterEncoder.forward` adds
them, the character CNN, highway layers and projection, then each LSTM layer as one ONNX `Scan`
over the time steps (the recurrence a loop, not unrolled) on the dense batch as
`elmo_plugin.elmo.bilm.lstm.dense` runs it: the backward direction reversed within each
sentence, every step on every row, padding masked at the end. Imported only by
`elmo_plugin.elmo.formats.onnx_export`, which checks that `onnx` is installed.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy
import torch

try:
    from onnx import (
        GraphProto,
        ModelProto,
        NodeProto,
        TensorProto,
        ValueInfoProto,
        helper,
        numpy_helper,
    )
except ImportError:  # the `onnx` extra: `onnx_export` names it when an export is asked for.
    pass  # Importing this module must still work (`--include-package` imports every module).

from elmo_plugin.elmo.bilm.characters.encoder import ElmoCharacterEncoder, weight_and_bias
from elmo_plugin.elmo.bilm.characters.ids import (
    BEGINNING_OF_SENTENCE_CHARACTERS,
    END_OF_SENTENCE_CHARACTERS,
    PADDING_CHARACTER,
)
from elmo_plugin.elmo.bilm.lstm.module import BiLstmLayer, ElmoBiLstm
from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.formats.onnx_export import INPUT_NAME, LAYERS_NAME, MASK_NAME, MIXED_NAME

# The operator set the graph is written in: ONNX Runtime 1.14 (2023) and later run it.
OPSET = 17


def _array(tensor: torch.Tensor, shape: Optional[Sequence[int]] = None) -> numpy.ndarray:
    array = tensor.detach().cpu().float().numpy()
    return array if shape is None else array.reshape(shape)


class Graph:
    """Nodes and initializers under fresh names; `op` adds a node and names its outputs."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.nodes: List[NodeProto] = []
        self.initializers: List[TensorProto] = []
        self._count = 0

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{self.prefix}{hint}_{self._count}"

    def constant(self, hint: str, array: numpy.ndarray) -> str:
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def ints(self, *values: int) -> str:
        return self.constant("ints", numpy.array(values, dtype=numpy.int64))

    def scalar(self, value: float) -> str:
        return self.constant("scalar", numpy.array(value, dtype=numpy.float32))

    def op(self, op_type: str, *inputs: str, **attributes) -> str:
        return self.ops(op_type, 1, *inputs, **attributes)[0]

    def ops(self, op_type: str, count: int, *inputs: str, **attributes) -> List[str]:
        outputs = [self.fresh(op_type.lower()) for _ in range(count)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, **attributes))
        return outputs


def marked_ids(graph: Graph, ids: str) -> Tuple[str, str, str]:
    """`(batch, tokens + 2, 50)` ids with `<S>` before each sentence and `</S>` after it,
    their `(batch, tokens + 2)` mask and each sentence's length with the markers `(batch, 1)`:
    `with_sentence_markers`, a sentence being its tokens up to the first all-zero one."""
    present = graph.op("Greater", graph.op("ReduceMax", ids, axes=[2], keepdims=0), graph.ints(0))
    lengths = graph.op(
        "ReduceSum", graph.op("Cast", present, to=TensorProto.INT64), graph.ints(1), keepdims=0
    )
    rows = graph.op("Concat", graph.op("Shape", ids, start=0, end=1), graph.ints(1, 50), axis=0)

    def marker(characters: Sequence[int]) -> str:
        return graph.constant("marker", numpy.array(characters, numpy.int64).reshape(1, 1, 50) + 1)

    start = graph.op("Expand", marker(BEGINNING_OF_SENTENCE_CHARACTERS), rows)
    blank = graph.op("Expand", graph.constant("blank", numpy.zeros((1, 1, 50), numpy.int64)), rows)
    marked = graph.op("Concat", start, ids, blank, axis=1)
    steps = graph.op("Squeeze", graph.op("Shape", marked, start=1, end=2), graph.ints(0))
    positions = graph.op("Range", _zero(graph), steps, _one(graph))
    end = graph.op("Unsqueeze", graph.op("Add", lengths, _one(graph)), graph.ints(1))
    is_end = graph.op("Unsqueeze", graph.op("Equal", positions, end), graph.ints(2))
    marked = graph.op("Where", is_end, marker(END_OF_SENTENCE_CHARACTERS), marked)
    length_with_markers = graph.op("Add", end, _one(graph))
    mask = graph.op("Less", positions, length_with_markers)
    return marked, mask, length_with_markers


def _zero(graph: Graph) -> str:
    return graph.constant("zero", numpy.array(0, dtype=numpy.int64))


def _one(graph: Graph) -> str:
    return graph.constant("one", numpy.array(1, dtype=numpy.int64))


def encode_tokens(graph: Graph, encoder: ElmoCharacterEncoder, marked: str, mask: str) -> str:
    """`(batch, steps, projection_dim)` token encodings of `(batch, steps, 50)` ids, zero where
    `mask` is false: `ElmoCharacterEncoder._encode` once per distinct row of ids (`Unique`),
    as the encoder deduplicates: padding is one row, and the CNN is most of the work."""
    flat = graph.op("Reshape", marked, graph.ints(-1, encoder.max_characters_per_token))
    distinct, _, occurrences, _ = graph.ops("Unique", 4, flat, axis=0, sorted=0)
    embedded = graph.op(
        "Gather",
        graph.constant("char_embedding", _array(encoder.char_embedding)),
        _trim_padding(graph, distinct, max(width for width, _ in encoder.filters)),
    )
    channels = graph.op("Transpose", embedded, perm=[0, 2, 1])
    activation = {"relu": "Relu", "tanh": "Tanh"}[encoder.activation]
    pooled = []
    for convolution in encoder.convolutions:
        weight, bias = weight_and_bias(convolution)
        features = graph.op(
            "Conv",
            channels,
            graph.constant("conv", _array(weight)),
            graph.constant("conv_bias", _array(bias)),
        )
        pooled.append(graph.op(activation, graph.op("ReduceMax", features, axes=[2], keepdims=0)))
    current = graph.op("Concat", *pooled, axis=1)
    for layer in encoder.highways.layers:
        projected = _linear(graph, current, layer.weight, layer.bias)
        nonlinear, gate = graph.ops("Split", 2, projected, axis=1)
        gate = graph.op("Sigmoid", gate)
        carried = graph.op("Mul", gate, current)
        transformed = graph.op(
            "Mul", graph.op("Sub", graph.scalar(1.0), gate), graph.op("Relu", nonlinear)
        )
        current = graph.op("Add", carried, transformed)
    projected = _linear(graph, current, encoder.projection.weight, encoder.projection.bias)
    shape = graph.op(
        "Concat",
        graph.op("Shape", marked, start=0, end=2),
        graph.ints(encoder.projection_dim),
        axis=0,
    )
    tokens = graph.op("Reshape", graph.op("Gather", projected, occurrences), shape)
    return graph.op("Where", graph.op("Unsqueeze", mask, graph.ints(2)), tokens, graph.scalar(0.0))


def _trim_padding(graph: Graph, rows: str, widest_filter: int) -> str:
    """`ElmoCharacterEncoder._trim_padding`: the character positions up to the last that is
    neither padding nor 0 (the rows of positions past a sentence's end, whose encodings are
    masked) in any row, and one window of the widest filter more."""
    real = graph.op(
        "And",
        graph.op("Not", graph.op("Equal", rows, graph.ints(PADDING_CHARACTER + 1))),
        graph.op("Greater", rows, graph.ints(0)),
    )
    used = graph.op("ReduceMax", graph.op("Cast", real, to=TensorProto.INT64), axes=[0])
    width = graph.op("Shape", rows, start=1, end=2)
    numbers = graph.op(
        "Range", _one(graph), graph.op("Add", graph.op("Squeeze", width), _one(graph)), _one(graph)
    )
    last = graph.op("ReduceMax", graph.op("Mul", used, numbers), keepdims=1, axes=[1])
    keep = graph.op(
        "Min",
        graph.op("Add", graph.op("Reshape", last, graph.ints(1)), graph.ints(widest_filter)),
        width,
    )
    return graph.op("Slice", rows, graph.ints(0), keep, graph.ints(1))


def _linear(graph: Graph, inputs: str, weight: torch.Tensor, bias: torch.Tensor) -> str:
    """`torch.nn.functional.linear`: the weight kept `(out, in)`, transposed by `Gemm`."""
    return graph.op(
        "Gemm",
        inputs,
        graph.constant("weight", _array(weight)),
        graph.constant("bias", _array(bias)),
        transB=1,
    )


def reversal(graph: Graph, steps_like: str, lengths: str) -> str:
    """`(batch, steps)`: the position each backward step reads (`dense._reversal`)."""
    steps = graph.op("Squeeze", graph.op("Shape", steps_like, start=1, end=2), graph.ints(0))
    positions = graph.op("Range", _zero(graph), steps, _one(graph))
    backwards = graph.op("Sub", graph.op("Sub", lengths, _one(graph)), positions)
    return graph.op("Where", graph.op("Less", positions, lengths), backwards, positions)


def _in_steps(graph: Graph, sequence: str, order: str) -> str:
    """`(batch, steps, dim)` rows of `sequence` taken in `(batch, steps)` `order`."""
    indices = graph.op(
        "Expand", graph.op("Unsqueeze", order, graph.ints(2)), graph.op("Shape", sequence)
    )
    return graph.op("GatherElements", sequence, indices, axis=1)


def run_lstm(graph: Graph, lstm: ElmoBiLstm, tokens: str, mask: str, lengths: str) -> List[str]:
    """Each LSTM layer's `(batch, steps, 2 * hidden)` outputs, the forward direction first,
    zero where `mask` is false: `dense.run_dense` without dropout, from zero states."""
    order = reversal(graph, tokens, lengths)
    directions = [tokens, _in_steps(graph, tokens, order)]
    layer_input = graph.op(
        "Concat", *[graph.op("Unsqueeze", d, graph.ints(0)) for d in directions], axis=0
    )
    batch = graph.op("Shape", tokens, start=0, end=1)
    outputs = []
    for i, layer in enumerate(lstm.bilstm_layers):
        output = _run_layer(graph, layer, layer_input, batch)
        if i > 0 and lstm.use_skip_connections:
            output = graph.op("Add", output, layer_input)
        forward, backward = [
            graph.op("Squeeze", part, graph.ints(0))
            for part in graph.ops("Split", 2, output, axis=0)
        ]
        both = graph.op("Concat", forward, _in_steps(graph, backward, order), axis=2)
        outputs.append(
            graph.op("Where", graph.op("Unsqueeze", mask, graph.ints(2)), both, graph.scalar(0.0))
        )
        layer_input = output
    return outputs


def _run_layer(graph: Graph, layer: BiLstmLayer, inputs: str, batch: str) -> str:
    """`(2, batch, steps, hidden)` outputs of `(2, batch, steps, input)` inputs, both directions
    in one `Scan` over axis 2 (`packed.run_layer`'s products, `gate_math.step_gates`)."""
    cell, hidden = layer.cell_size, layer.hidden_size
    input_weight = graph.constant(
        "input_weight", _array(layer.input_weight, (2, 1, layer.input_size, 4 * cell))
    )
    bias = graph.constant("bias", _array(layer.bias, (2, 1, 1, 4 * cell)))
    gate_inputs = graph.op("Add", graph.op("MatMul", inputs, input_weight), bias)
    state_weight = graph.constant("state_weight", _array(layer.state_weight))
    projection = graph.constant("projection_weight", _array(layer.projection_weight))
    body = _step_body(graph, state_weight, projection, cell, layer.cell_clip, layer.proj_clip)

    def zeros(size: int) -> str:
        return graph.op(
            "ConstantOfShape",
            graph.op("Concat", graph.ints(2), batch, graph.ints(size), axis=0),
            value=helper.make_tensor("zero", TensorProto.FLOAT, [1], [0.0]),
        )

    _, _, output = graph.ops(
        "Scan",
        3,
        zeros(hidden),
        zeros(cell),
        gate_inputs,
        body=body,
        num_scan_inputs=1,
        scan_input_axes=[2],
        scan_output_axes=[2],
    )
    return output


def _step_body(
    outer: Graph,
    state_weight: str,
    projection: str,
    cell: int,
    cell_clip: Optional[float],
    proj_clip: Optional[float],
) -> GraphProto:
    """The `Scan` body of one step of both directions: `(hidden, memory, gate_inputs)` to
    `(hidden, memory, hidden)`, reading the outer graph's weights."""
    # Names unique across the graph and its bodies.
    step = Graph(prefix=outer.fresh("step") + "/")
    hidden_in, memory_in, gate_inputs, output = (
        step.prefix + name for name in ("hidden", "memory", "gate_inputs", "output")
    )

    def clipped(value: str, clip: Optional[float]) -> str:
        return step.op("Clip", value, step.scalar(-clip), step.scalar(clip)) if clip else value

    gates = step.op("Add", gate_inputs, step.op("MatMul", hidden_in, state_weight))
    gated, candidate = step.ops("Split", 2, gates, step.ints(3 * cell, cell), axis=2)
    input_gate, forget_gate, output_gate = step.ops("Split", 3, step.op("Sigmoid", gated), axis=2)
    kept = step.op("Mul", forget_gate, memory_in)
    added = step.op("Mul", input_gate, step.op("Tanh", candidate))
    memory = clipped(step.op("Add", kept, added), cell_clip)
    cell_output = step.op("Mul", output_gate, step.op("Tanh", memory))
    hidden = clipped(step.op("MatMul", cell_output, projection), proj_clip)
    step.nodes.append(helper.make_node("Identity", [hidden], [output]))

    def value(name: str) -> ValueInfoProto:
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)

    return helper.make_graph(
        step.nodes,
        "lstm_step",
        [value(hidden_in), value(memory_in), value(gate_inputs)],
        [value(hidden), value(memory), value(output)],
        initializer=step.initializers,
    )


def build_model(
    bilm: ElmoBiLm, scalar_mix: Optional[Sequence], keep_sentence_boundaries: bool
) -> ModelProto:
    """The model `elmo_plugin.elmo.formats.onnx_export` describes; `scalar_mix` is its
    `ScalarMixWeights`."""
    graph = Graph()
    ids = INPUT_NAME
    marked, mask, lengths = marked_ids(graph, ids)
    tokens = encode_tokens(graph, bilm.character_encoder, marked, mask)
    token_layer = graph.op("Concat", tokens, tokens, axis=2)
    layers = [token_layer] + run_lstm(graph, bilm.lstm, tokens, mask, lengths)
    if not keep_sentence_boundaries:
        # `remove_sentence_boundaries`: without the first and last position, masked by the
        # mask's positions from the third on.
        inner = graph.op("Slice", mask, graph.ints(2), graph.ints(2**62), graph.ints(1))
        layers = [_without_markers(graph, layer, inner) for layer in layers]
        mask = inner
    outputs = {
        LAYERS_NAME: graph.op(
            "Concat", *[graph.op("Unsqueeze", layer, graph.ints(0)) for layer in layers], axis=0
        ),
        MASK_NAME: graph.op("Identity", mask),
    }
    if scalar_mix is not None:
        outputs[MIXED_NAME] = _mix(graph, layers, scalar_mix)
    for name, value in outputs.items():
        graph.nodes.append(helper.make_node("Identity", [value], [name]))
    dim = bilm.get_output_dim()
    steps = "tokens_with_markers" if keep_sentence_boundaries else "tokens"
    types: Dict[str, Tuple[int, List[Union[str, int]]]] = {
        LAYERS_NAME: (TensorProto.FLOAT, [bilm.num_layers, "batch", steps, dim]),
        MASK_NAME: (TensorProto.BOOL, ["batch", steps]),
        MIXED_NAME: (TensorProto.FLOAT, ["batch", steps, dim]),
    }
    onnx_graph = helper.make_graph(
        graph.nodes,
        "elmo",
        [helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "tokens", 50])],
        [helper.make_tensor_value_info(name, types[name][0], types[name][1]) for name in outputs],
        initializer=graph.initializers,
    )
    # IR version 8 goes with opset 17: older runtimes refuse a newer IR version.
    return helper.make_model(
        onnx_graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8
    )


def _without_markers(graph: Graph, layer: str, inner_mask: str) -> str:
    inner = graph.op("Slice", layer, graph.ints(1), graph.ints(-1), graph.ints(1))
    return graph.op(
        "Where", graph.op("Unsqueeze", inner_mask, graph.ints(2)), inner, graph.scalar(0.0)
    )


def _mix(graph: Graph, layers: List[str], scalar_mix: Sequence) -> str:
    """`ScalarMix.forward` with fixed weights: the softmax taken here as torch takes it."""
    scalar_parameters, gamma = scalar_mix
    weights = torch.softmax(torch.tensor(list(scalar_parameters), dtype=torch.float), dim=0)
    mixed = None
    for weight, layer in zip(weights, layers):
        term = graph.op("Mul", graph.scalar(float(weight)), layer)
        mixed = term if mixed is None else graph.op("Add", mixed, term)
    assert mixed is not None
    return graph.op("Mul", graph.scalar(gamma), mixed)
