"""The fused dense path of ElmoBiLstm (the GPU's) equals the packed path (the CPU's), forward
and backward, with the gate math in torch here and as Triton kernels under TRITON_INTERPRET=1
(tests/elmo/fused_lstm_check.py, in a subprocess: the variable must be set before Triton is
imported). On CUDA the same comparison runs with the compiled kernels."""

import os
import subprocess
import sys

import pytest
import torch

from elmo_plugin.elmo.bilm_lstm import ElmoBiLstm
from elmo_plugin.elmo.lstm_gates import triton
from tests.elmo.fused_lstm_check import compare_paths

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT_ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.mark.parametrize("clips", [(3.0, 3.0), (None, None)], ids=["clipped", "unclipped"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_fused_path_equals_the_packed_path(clips, dtype):
    compare_paths("cpu", dtype, *clips)


def test_the_gpu_runs_fused_and_the_cpu_packed():
    lstm = ElmoBiLstm(4, 3, 5, 2)
    assert not lstm.runs_fused(torch.zeros(1))
    lstm.fused = True
    assert lstm.runs_fused(torch.zeros(1))


def test_the_fused_path_reads_nothing_back_to_the_host():
    """No `.item()`, `int(tensor)` or nonzero on the fused path: checked by running it with
    every host read of a device value turned into an error."""
    lstm = ElmoBiLstm(6, 4, 8, 2, cell_clip=3.0, proj_clip=3.0)
    lstm.fused = True
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    inputs = torch.randn(2, 5, 6, requires_grad=True)
    with _host_reads_forbidden():
        outputs, final = lstm(inputs, mask)
        (outputs[-1].sum() + final.hidden.sum()).backward()


class _host_reads_forbidden:
    """Makes `Tensor.__int__`, `.item()`, `.tolist()` and `nonzero` raise."""

    NAMES = ("__int__", "__index__", "item", "tolist", "nonzero", "__bool__")

    def __enter__(self):
        self.saved = {name: getattr(torch.Tensor, name) for name in self.NAMES}

        def forbidden(name):
            def read(*args, **kwargs):
                raise AssertionError(f"Tensor.{name}: a device value read back to the host")

            return read

        for name in self.NAMES:
            setattr(torch.Tensor, name, forbidden(name))

    def __exit__(self, *exc):
        for name, method in self.saved.items():
            setattr(torch.Tensor, name, method)


@pytest.mark.skipif(triton is None, reason="this torch has no Triton")
def test_the_triton_kernels_under_the_interpreter():
    path = os.pathsep.join(filter(None, [PROJECT_ROOT, os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=path)
    result = subprocess.run(
        [sys.executable, os.path.join(HERE, "fused_lstm_check.py"), "cpu"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "kernels: triton" in result.stdout


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_compiled_kernels_on_cuda(dtype):
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        compare_paths("cuda", dtype, 3.0, 3.0)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
