"""
Which of torch's ONNX exporters turns an ELMo-style LSTM loop (a step with a projected,
clipped state, over a dynamic number of steps and batch size) into an ONNX loop rather than an
unrolled graph, on the installed torch: the dynamo exporter (`torch.onnx.export(dynamo=True)`,
which needs `onnxscript`) on `torch._higher_order_ops.scan`, and the TorchScript-based exporter
(`dynamo=False`) on a scripted loop. For each: whether it exports, the ONNX ops, the file size
against the weights' and the largest difference from torch at two shapes. docs/elmo.md says
what `elmo_plugin.elmo.formats.onnx.export` uses and why.

Then the precision: how far ONNX Runtime's `Tanh` and `Sigmoid` are from float64 against
torch's (a million values), and, for the shipped biLM, the largest difference per layer of the
export (in ONNX Runtime) from our `ElmoBiLm`, and of each from our biLM in float64, on real
sentences and on one word repeated 100 times.

    pip install onnxscript  # for the dynamo exporter
    python experiments/onnx_exporters.py
"""

import json
import os
import tempfile
import time
import warnings
from typing import List, Tuple

import numpy
import torch

HIDDEN, CELL = 16, 64


class Step(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.state_weight = torch.nn.Parameter(torch.randn(HIDDEN, 4 * CELL) * 0.1)
        self.projection = torch.nn.Parameter(torch.randn(CELL, HIDDEN) * 0.1)

    def step(
        self, hidden: torch.Tensor, memory: torch.Tensor, gates: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        gates = gates + hidden @ self.state_weight
        input_gate, forget_gate, output_gate, candidate = gates.chunk(4, dim=-1)
        memory = torch.sigmoid(forget_gate) * memory + torch.sigmoid(input_gate) * torch.tanh(
            candidate
        )
        memory = memory.clamp(-3.0, 3.0)
        hidden = (torch.sigmoid(output_gate) * torch.tanh(memory)) @ self.projection
        return hidden.clamp(-3.0, 3.0), memory


class ScanLoop(Step):
    def forward(self, gates: torch.Tensor) -> torch.Tensor:  # (steps, batch, 4 * cell)
        from torch._higher_order_ops.scan import scan

        def combine(carry, step_gates):
            hidden, memory = self.step(carry[0], carry[1], step_gates)
            return (hidden, memory), hidden.clone()

        batch = gates.shape[1]
        initial = (gates.new_zeros(batch, HIDDEN), gates.new_zeros(batch, CELL))
        return scan(combine, initial, gates)[1]


class PythonLoop(Step):
    def forward(self, gates: torch.Tensor) -> torch.Tensor:
        hidden = gates.new_zeros(gates.shape[1], self.projection.shape[1])
        memory = gates.new_zeros(gates.shape[1], self.projection.shape[0])
        outputs = []
        for t in range(gates.shape[0]):
            hidden, memory = self.step(hidden, memory, gates[t])
            outputs.append(hidden)
        return torch.stack(outputs)


def _dynamo(module: torch.nn.Module, example: torch.Tensor) -> bytes:
    shapes = ({0: torch.export.Dim("steps"), 1: torch.export.Dim("batch")},)
    program = torch.onnx.export(module, (example,), dynamo=True, dynamic_shapes=shapes)
    assert program is not None
    return program.model_proto.SerializeToString()


def _torchscript(module: torch.nn.Module, example: torch.Tensor) -> bytes:
    axes = {"gates": {0: "steps", 1: "batch"}}
    scripted = torch.jit.script(module)
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "loop.onnx")
        torch.onnx.export(
            scripted, (example,), path, dynamo=False, input_names=["gates"], dynamic_axes=axes
        )
        with open(path, "rb") as model:
            return model.read()


def main() -> None:
    import onnx
    import onnxruntime

    warnings.filterwarnings("ignore")
    print(
        f"torch {torch.__version__}, onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}"
    )
    torch.manual_seed(0)
    for name, exporter, module in (
        ("dynamo + scan", _dynamo, ScanLoop().eval()),
        ("TorchScript + scripted loop", _torchscript, PythonLoop().eval()),
    ):
        weight_bytes = sum(p.numel() * 4 for p in module.parameters())
        try:
            start = time.perf_counter()
            model = exporter(module, torch.randn(7, 3, 4 * CELL))
            seconds = time.perf_counter() - start
        except Exception as error:  # what each exporter fails with is the finding
            print(f"{name}: fails: {type(error).__name__}: {str(error).splitlines()[0][:300]}")
            continue
        ops = sorted({node.op_type for node in onnx.load_from_string(model).graph.node})
        session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
        differences = []
        for steps, batch in ((7, 3), (40, 5)):
            gates = torch.randn(steps, batch, 4 * CELL)
            theirs = session.run(None, {session.get_inputs()[0].name: gates.numpy()})[0]
            with torch.no_grad():
                differences.append(float(numpy.abs(theirs - module(gates).numpy()).max()))
        print(
            f"{name}: exports in {seconds:.1f} s; ops {ops}; {len(model) / weight_bytes:.2f}x the "
            f"weights' bytes; largest difference at 7x3 and 40x5 steps x batch: {differences}"
        )


def _unary_errors() -> None:
    import onnxruntime
    from onnx import TensorProto, helper

    values = torch.randn(1_000_000, generator=torch.Generator().manual_seed(0)) * 4
    for op in ("Tanh", "Sigmoid"):
        node = helper.make_node(op, ["x"], ["y"])
        info = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None]) for n in "xy"]
        graph = helper.make_graph([node], "unary", info[:1], info[1:])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        session = onnxruntime.InferenceSession(model.SerializeToString())
        theirs = torch.from_numpy(session.run(None, {"x": values.numpy()})[0]).double()
        function = getattr(torch, op.lower())
        exact = function(values.double())
        ours = function(values).double()
        print(
            f"{op}: largest distance from float64: onnxruntime "
            f"{(theirs - exact).abs().max():.1e}, torch {(ours - exact).abs().max():.1e}"
        )


def _float32_noise_floor() -> None:
    import onnxruntime

    from elmo_plugin.elmo import batch_to_ids, load_bilm
    from elmo_plugin.elmo.formats.onnx.export import export_onnx, parameter_bytes

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shipped = os.path.join(root, "elmo_plugin", "pretrained", "elmo_wikipedia_512x128")
    files = (os.path.join(shipped, "options.json"), os.path.join(shipped, "weights.hdf5"))
    with open(os.path.join(root, "fixtures", "elmo", "sentences.json")) as handle:
        words = [line.split() for group in json.load(handle) for line in group]
    long = [word for sentence in words for word in sentence]
    bilm = load_bilm(*files)
    for name, batch in (
        ("the fixture's 30 sentences, 100 and 1 of their words", [long[:100], long[:1]] + words),
        ('"word" 100 times', [["word"] * 100]),
    ):
        ids = batch_to_ids(batch)
        with torch.no_grad():
            ours = torch.stack(bilm(ids)["activations"])
            exact = torch.stack(load_bilm(*files).double()(ids)["activations"])
        with tempfile.TemporaryDirectory() as directory:
            path = export_onnx(
                bilm, os.path.join(directory, "m.onnx"), keep_sentence_boundaries=True
            )
            session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
            theirs = torch.from_numpy(session.run(["layers"], {"character_ids": ids.numpy()})[0])
            size = os.path.getsize(path) / parameter_bytes(bilm)

        def largest(a: torch.Tensor, b: torch.Tensor) -> List[str]:
            return [f"{float((x.double() - y.double()).abs().max()):.1e}" for x, y in zip(a, b)]

        print(
            f"{name}: largest difference per layer, export from ours {largest(theirs, ours)}, "
            f"ours from float64 {largest(ours, exact)}, export from float64 "
            f"{largest(theirs, exact)}; the file {size:.4f}x the weights' bytes"
        )


if __name__ == "__main__":
    main()
    _unary_errors()
    _float32_noise_floor()
