"""The fused dense path of ElmoBiLstm (the GPU's) equals the packed path (the CPU's), forward
and backward, with the gate math in torch here and as Triton kernels under TRITON_INTERPRET=1
(tests/elmo/fused_lstm_check.py, in a subprocess: the variable must be set before Triton is
imported). On CUDA the same comparison runs with the compiled kernels."""

import copy
import dataclasses
import os
import subprocess
import sys
from typing import Optional

import pytest
import torch

from elmo_plugin.elmo.bilm.lstm.module import ElmoBiLstm, LstmPath
from elmo_plugin.elmo.bilm.lstm.triton_gates import triton, uses_triton
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.settings import Execution
from tests.elmo.fused_lstm_check import compare_paths
from tests.host_reads import host_reads_forbidden
from tests.paths import PROJECT_ROOT

try:
    from torch.utils.flop_counter import FlopCounterMode
except ImportError:  # torch < 2.1
    FlopCounterMode = None  # type: ignore[misc,assignment]


@pytest.mark.parametrize("clips", [(3.0, 3.0), (None, None)], ids=["clipped", "unclipped"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_fused_path_equals_the_packed_path(clips, dtype):
    compare_paths("cpu", dtype, *clips)


@pytest.mark.parametrize("sorted_inference", [False, True])
def test_both_paths_take_a_batch_of_empty_sequences(sorted_inference):
    """Zero outputs and the initial states back, on the packed path (which had no step to
    concatenate) and on the fused one, dense and sorted."""
    mask = torch.zeros(2, 3, dtype=torch.bool)
    inputs = torch.randn(2, 3, 6)
    packed = ElmoBiLstm(6, 4, 8, 2)
    fused = copy.deepcopy(packed)
    fused.execution = Execution(fused=True, sorted_inference=sorted_inference)
    initial = packed.zero_state(2, inputs)
    initial = type(initial)(initial.hidden + 0.5, initial.memory - 0.5)
    for lstm in (packed, fused):
        with torch.no_grad():
            outputs, final = lstm(inputs, mask, initial)
        assert all(not output.any() for output in outputs)
        torch.testing.assert_close(final.hidden, initial.hidden)
        torch.testing.assert_close(final.memory, initial.memory)


def test_the_gpu_runs_fused_and_the_cpu_packed():
    lstm = ElmoBiLstm(4, 3, 5, 2)
    assert not lstm.runs_fused(torch.zeros(1))
    lstm.execution = dataclasses.replace(lstm.execution, fused=True)
    assert lstm.runs_fused(torch.zeros(1))


def test_the_fused_path_reads_nothing_back_to_the_host():
    """No `.item()`, `int(tensor)`, nonzero or boolean selection on the fused path: checked by
    running it with every host read of a device value turned into an error."""
    lstm = ElmoBiLstm(6, 4, 8, 2, cell_clip=3.0, proj_clip=3.0)
    lstm.execution = dataclasses.replace(lstm.execution, fused=True)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    inputs = torch.randn(2, 5, 6, requires_grad=True)
    with host_reads_forbidden():
        outputs, final = lstm(inputs, mask)
        (outputs[-1].sum() + final.hidden.sum()).backward()


@pytest.mark.skipif(FlopCounterMode is None, reason="this torch has no FlopCounterMode")
def test_inference_on_the_fused_path_computes_no_step_past_a_sequence_end():
    hidden, cell, layers = 4, 8, 2
    lstm = ElmoBiLstm(6, hidden, cell, layers, cell_clip=3.0, proj_clip=3.0)
    lengths = torch.tensor([2, 7, 0, 1])
    mask = torch.arange(7).unsqueeze(0) < lengths.unsqueeze(1)
    inputs = torch.randn(4, 7, 6)

    def flops(needs_gradients: bool) -> int:
        # Sorted inference asked for, and left to the path where gradients flow (it would refuse).
        sorts = None if needs_gradients else True
        lstm.execution = dataclasses.replace(lstm.execution, fused=True, sorted_inference=sorts)
        with FlopCounterMode(display=False) as counter:
            lstm(inputs.clone().requires_grad_(needs_gradients), mask)
        return counter.get_total_flops()

    with torch.no_grad():
        inference = flops(False)
    padded_rows = 4 * 7 - int(lengths.sum())
    # A row's products in a layer, both directions: its input's, the recurrent one and the
    # projection; the first layer's input has 6 features, the second's `hidden`.
    per_row = [
        2 * 2 * (width * 4 * cell + hidden * 4 * cell + cell * hidden) for width in (6, hidden)
    ]
    assert flops(True) - inference == padded_rows * sum(per_row)


def test_inference_runs_sorted_where_it_was_measured_to_pay():
    def lstm(cell: int, dtype: torch.dtype) -> ElmoBiLstm:
        return ElmoBiLstm(6, 4, cell, 1, compute_dtype=dtype)

    assert lstm(4096, torch.float32).sorts_inference()
    assert not lstm(1024, torch.float32).sorts_inference()
    assert not lstm(4096, torch.bfloat16).sorts_inference()
    forced = lstm(8, torch.bfloat16)
    forced.execution = dataclasses.replace(forced.execution, sorted_inference=True)
    assert forced.sorts_inference()


@pytest.mark.skipif(triton is None, reason="this torch has no Triton")
@pytest.mark.slow
def test_the_triton_kernels_under_the_interpreter():
    path = os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=path)
    result = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "tests" / "elmo" / "fused_lstm_check.py"), "cpu"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "kernels: triton" in result.stdout


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_compiled_kernels_on_cuda(dtype):
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        compare_paths("cuda", dtype, 3.0, 3.0)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


def _graph_comparison(device, graphed_path: Optional[LstmPath] = None):
    """ElmoBiLstm with and without CUDA graphs: training steps of one shape (captured on the
    second, replayed after, and a second forward before its backward takes the eager path),
    then inference batches of several lengths (rounded up to the graphs' bucket). With
    `graphed_path`, the graphed LSTM runs that path whatever its setting says."""
    torch.manual_seed(0)
    eager = ElmoBiLstm(6, 4, 8, 2, cell_clip=3.0, proj_clip=3.0).to(device)
    eager.execution = dataclasses.replace(eager.execution, fused=True)
    graphed = copy.deepcopy(eager)
    graphed.execution = dataclasses.replace(graphed.execution, cuda_graphs=True)
    if graphed_path is not None:
        graphed.choose_path = lambda *_: graphed_path  # type: ignore[method-assign]
    lengths = torch.tensor([7, 3, 0, 5, 1], device=device)
    mask = torch.arange(7, device=device).unsqueeze(0) < lengths.unsqueeze(1)
    for step in range(4):
        inputs = torch.randn(5, 7, 6, device=device)
        results = []
        for lstm in (eager, graphed):
            lstm.zero_grad()
            leaf = inputs.clone().requires_grad_()
            outputs, final = lstm(leaf, mask)
            if step == 3:  # a second forward pass before the first one's backward
                lstm(leaf, mask)[0][-1].sum().backward()
            (outputs[-1].pow(2).sum() + final.memory.sum()).backward()
            results.append([*outputs, leaf.grad] + [p.grad for p in lstm.parameters()])
        for expected, actual in zip(*results):
            torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        for timesteps in (9, 12, 9, 12, 30):
            inputs = torch.randn(3, timesteps, 6, device=device)
            short = torch.arange(timesteps, device=device).unsqueeze(0) < torch.tensor(
                [timesteps, 2, timesteps - 1], device=device
            ).unsqueeze(1)
            for expected, actual in zip(eager(inputs, short)[0], graphed(inputs, short)[0]):
                assert actual.shape == expected.shape
                torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)


def test_the_graphs_path_changes_nothing_on_the_cpu():
    """No graphs are captured on the CPU, but the inference lengths are bucketed as on CUDA."""
    _graph_comparison("cpu", LstmPath(fused=True, cuda_graphs=True))


def test_cuda_graphs_demanded_on_the_cpu_are_refused_and_auto_runs_none():
    lstm = ElmoBiLstm(6, 4, 8, 2)
    mask = torch.ones(2, 3, dtype=torch.bool)
    lstm.execution = dataclasses.replace(lstm.execution, fused=True, cuda_graphs=True)
    with pytest.raises(ConfigurationError, match="cuda_graphs is true and the input is on cpu"):
        lstm(torch.randn(2, 3, 6), mask)
    lstm.execution = dataclasses.replace(lstm.execution, cuda_graphs=None)
    lstm(torch.randn(2, 3, 6), mask)
    assert lstm.last_path == LstmPath(fused=True, triton=uses_triton(torch.zeros(1)))


@pytest.mark.gpu
def test_cuda_graphs_replay_the_eager_results():
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        _graph_comparison("cuda")
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
