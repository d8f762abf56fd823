"""
Which implementation each device gets, decided here and nowhere else: every module that runs
differently on CUDA and on the CPU asks one of these, so the GPU's path and the CPU's are read
off one page. The figures behind each choice are in docs/performance.md.

- The LSTM (`runs_fused_by_default`): the fused dense path on CUDA, where launches and host
  reads set the pace and arithmetic is cheap; the packed path on the CPU, where padding is
  arithmetic it lacks.
- The recurrent product (`packs_for_onednn`): oneDNN's packed weights are a CPU feature.
- Step gates (`runs_triton`): Triton kernels on CUDA, or on the CPU under `TRITON_INTERPRET=1`
  (how the tests run them); torch operations elsewhere.
- CUDA graphs (`captures_cuda_graphs`): CUDA only.
- The character CNN's pooling and distinct rows (`pools_by_max_over_dim`,
  `keys_distinct_rows`): on CUDA, `adaptive_max_pool2d` takes a thread per (token, filter) and
  its backward scatters with atomics, and `unique(dim=0)` merge-sorts rows lexicographically;
  `max(dim)` and one int64 key a row (radix-sorted) are the fast forms there, while the CPU's
  own operators are fast on the CPU.
- Reduced precision (`emulates_bfloat16`): on a CPU without native bfloat16 arithmetic the
  weights are rounded but multiplied in float32.
- Host-to-device copies (`copies_asynchronously`): to CUDA from pinned memory, without waiting.
"""

import os
from typing import Union

import torch

# Triton's interpreter runs the kernels on CPU tensors (the tests' way to check them).
TRITON_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"

Located = Union[torch.Tensor, torch.device]


def on_cuda(located: Located) -> bool:
    """Whether a tensor (or a device) is on CUDA."""
    device = located if isinstance(located, torch.device) else located.device
    return device.type == "cuda"


def runs_fused_by_default(device: torch.device) -> bool:
    return on_cuda(device)


def packs_for_onednn(weight: torch.Tensor) -> bool:
    return weight.device.type == "cpu"


def runs_triton(tensor: torch.Tensor, triton_installed: bool) -> bool:
    return triton_installed and (on_cuda(tensor) or TRITON_INTERPRETED)


def captures_cuda_graphs(tensor: torch.Tensor) -> bool:
    return on_cuda(tensor)


def pools_by_max_over_dim(features: torch.Tensor) -> bool:
    return on_cuda(features)


def keys_distinct_rows(rows: torch.Tensor) -> bool:
    return on_cuda(rows)


def emulates_bfloat16(device: torch.device, cpu_has_native_bfloat16: bool) -> bool:
    return device.type == "cpu" and not cpu_has_native_bfloat16


def copies_asynchronously(device: torch.device) -> bool:
    return on_cuda(device)
