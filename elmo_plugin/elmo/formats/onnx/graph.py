"""
The ONNX graph of an `ElmoBiLm`, written node by node with `onnx.helper` (docs/elmo.md says why
not through `torch.onnx`): the token layer of `tokens` (the sentence markers, the
character CNN, highway layers and projection), then each LSTM layer as one ONNX `Scan`
over the time steps (the recurrence a loop, not unrolled) on the dense batch as
`elmo_plugin.elmo.bilm.lstm.dense` runs it: the backward direction reversed within each
sentence, every step on every row, padding masked at the end. Imported only by
`elmo_plugin.elmo.formats.onnx.export`, which checks that `onnx` is installed.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch

try:
    from onnx import GraphProto, ModelProto, TensorProto, ValueInfoProto, helper
except ImportError:  # the `onnx` extra: `export` names it when an export is asked for.
    pass  # Importing this module must still work (`--include-package` imports every module).

from elmo_plugin.elmo.bilm.lstm.module import BiLstmLayer, ElmoBiLstm
from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.formats.onnx.names import LAYERS_NAME, MASK_NAME, MIXED_NAME
from elmo_plugin.elmo.formats.onnx.nodes import Graph, array
from elmo_plugin.elmo.formats.onnx.tokens import token_layer

# The operator set the graph is written in: ONNX Runtime 1.14 (2023) and later run it.
OPSET = 17


def reversal(graph: Graph, steps_like: str, lengths: str) -> str:
    """`(batch, steps)`: the position each backward step reads (`dense._reversal`)."""
    steps = graph.op("Squeeze", graph.op("Shape", steps_like, start=1, end=2), graph.ints(0))
    positions = graph.op("Range", graph.zero(), steps, graph.one())
    backwards = graph.op("Sub", graph.op("Sub", lengths, graph.one()), positions)
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
        "input_weight", array(layer.input_weight, (2, 1, layer.input_size, 4 * cell))
    )
    bias = graph.constant("bias", array(layer.bias, (2, 1, 1, 4 * cell)))
    gate_inputs = graph.op("Add", graph.op("MatMul", inputs, input_weight), bias)
    state_weight = graph.constant("state_weight", array(layer.state_weight))
    projection = graph.constant("projection_weight", array(layer.projection_weight))
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
    """The model `elmo_plugin.elmo.formats.onnx.export` describes; `scalar_mix` is its
    `ScalarMixWeights`."""
    graph = Graph()
    inputs, tokens, mask, lengths = token_layer(graph, bilm)
    token_layers = graph.op("Concat", tokens, tokens, axis=2)
    layers = [token_layers] + run_lstm(graph, bilm.lstm, tokens, mask, lengths)
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
        inputs,
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
