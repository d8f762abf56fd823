"""
The pieces the ONNX graphs of `elmo_plugin.elmo.formats.onnx.graph` are written with: `Graph`,
which names nodes and initializers, and the nodes both token layers (`tokens`) share: the
sentence markers around each sentence and a linear layer. Imported only where `onnx` is
installed (`export` checks).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy
import torch

try:
    from onnx import NodeProto, TensorProto, helper, numpy_helper
except ImportError:  # the `onnx` extra: `export` names it when an export is asked for.
    pass  # Importing this module must still work (`--include-package` imports every module).

# The most values a constant may have to be stored once however often it is asked for.
_SMALL = 64


def array(tensor: torch.Tensor, shape: Optional[Sequence[int]] = None) -> numpy.ndarray:
    """A float32 copy of `tensor` to store in the graph."""
    values = tensor.detach().cpu().float().numpy()
    return values if shape is None else values.reshape(shape)


class Graph:
    """Nodes and initializers under fresh names; `op` adds a node and names its outputs."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.nodes: List[NodeProto] = []
        self.initializers: List[TensorProto] = []
        self._count = 0
        self._small: Dict[Tuple[str, Tuple[int, ...], bytes], str] = {}

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{self.prefix}{hint}_{self._count}"

    def constant(self, hint: str, values: numpy.ndarray) -> str:
        # Small constants (shapes, indices, scalars) are stored once: for a small model, their
        # many copies would be a tenth of the file.
        small = values.size <= _SMALL
        key = (values.dtype.str, values.shape, values.tobytes() if small else b"")
        if small and key in self._small:
            return self._small[key]
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(values, name))
        if small:
            self._small[key] = name
        return name

    def ints(self, *values: int) -> str:
        return self.constant("ints", numpy.array(values, dtype=numpy.int64))

    def scalar(self, value: float) -> str:
        return self.constant("scalar", numpy.array(value, dtype=numpy.float32))

    def zero(self) -> str:
        return self.constant("zero", numpy.array(0, dtype=numpy.int64))

    def one(self) -> str:
        return self.constant("one", numpy.array(1, dtype=numpy.int64))

    def op(self, op_type: str, *inputs: str, **attributes) -> str:
        return self.ops(op_type, 1, *inputs, **attributes)[0]

    def ops(self, op_type: str, count: int, *inputs: str, **attributes) -> List[str]:
        outputs = [self.fresh(op_type.lower()) for _ in range(count)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, **attributes))
        return outputs


def marked_ids(
    graph: Graph, ids: str, begin: numpy.ndarray, end: numpy.ndarray
) -> Tuple[str, str, str]:
    """`(batch, tokens + 2, width)` id rows with the row `begin` before each sentence and `end`
    after it, their `(batch, tokens + 2)` mask and each sentence's length with the markers
    `(batch, 1)`: `with_sentence_markers`, a sentence being its tokens up to the first all-zero
    one."""
    width = len(begin)
    present = graph.op("Greater", graph.op("ReduceMax", ids, axes=[2], keepdims=0), graph.ints(0))
    lengths = graph.op(
        "ReduceSum", graph.op("Cast", present, to=TensorProto.INT64), graph.ints(1), keepdims=0
    )
    rows = graph.op("Concat", graph.op("Shape", ids, start=0, end=1), graph.ints(1, width), axis=0)

    def marker(row: numpy.ndarray) -> str:
        return graph.constant("marker", numpy.asarray(row, numpy.int64).reshape(1, 1, width))

    start = graph.op("Expand", marker(begin), rows)
    blank = graph.op("Expand", marker(numpy.zeros(width, numpy.int64)), rows)
    marked = graph.op("Concat", start, ids, blank, axis=1)
    steps = graph.op("Squeeze", graph.op("Shape", marked, start=1, end=2), graph.ints(0))
    positions = graph.op("Range", graph.zero(), steps, graph.one())
    last = graph.op("Unsqueeze", graph.op("Add", lengths, graph.one()), graph.ints(1))
    is_end = graph.op("Unsqueeze", graph.op("Equal", positions, last), graph.ints(2))
    marked = graph.op("Where", is_end, marker(end), marked)
    length_with_markers = graph.op("Add", last, graph.one())
    mask = graph.op("Less", positions, length_with_markers)
    return marked, mask, length_with_markers


def linear(graph: Graph, inputs: str, weight: torch.Tensor, bias: torch.Tensor) -> str:
    """`torch.nn.functional.linear`: the weight kept `(out, in)`, transposed by `Gemm`."""
    return graph.op(
        "Gemm",
        inputs,
        graph.constant("weight", array(weight)),
        graph.constant("bias", array(bias)),
        transB=1,
    )
