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
- Reduced precision (`emulates_bfloat16`, `runs_bfloat16`): on a CPU without native bfloat16
  arithmetic the weights are rounded but multiplied in float32; a CUDA GPU before compute
  capability 8.0 has no bfloat16 products at all.
- Host-to-device copies (`copies_asynchronously`): to CUDA from pinned memory, without waiting.
- A device the user names (`check_cuda_device`): one this machine lacks (`--cuda-device 0`,
  `trainer.cuda_device`) is a `ConfigurationError` naming the flag or key, what torch sees and
  the way back to the CPU, before anything is loaded; not torch's driver traceback.
"""

import os
from typing import Any, Union

import torch

from elmo_plugin.elmo.errors import ConfigurationError

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


def captures_cuda_graphs(located: Located) -> bool:
    return on_cuda(located)


def pools_by_max_over_dim(features: torch.Tensor) -> bool:
    return on_cuda(features)


def keys_distinct_rows(rows: torch.Tensor) -> bool:
    return on_cuda(rows)


def emulates_bfloat16(device: torch.device, cpu_has_native_bfloat16: bool) -> bool:
    return device.type == "cpu" and not cpu_has_native_bfloat16


def runs_bfloat16(device: torch.device) -> bool:
    """Whether `device` runs bfloat16 products: any CPU (natively or emulated), a CUDA GPU from
    compute capability 8.0 (Ampere) on."""
    return not on_cuda(device) or torch.cuda.get_device_capability(device) >= (8, 0)


def copies_asynchronously(device: torch.device) -> bool:
    return on_cuda(device)


# What a GPU needs, said in the error itself: a pip install carries no docs/.
GPU_NEEDS = (
    "a GPU needs torch's CUDA build (the default package index's on Linux, or PyTorch's index "
    "for an older CUDA) and an NVIDIA driver recent enough for its CUDA"
)


def check_cuda_device(device: Any, named: str) -> None:
    """`device` (an int, or a list of them for several) is -1 / None (the CPU) or a CUDA
    device this process can use; `named` is how the user gave it (`--cuda-device`)."""
    devices = device if isinstance(device, (list, tuple)) else [device]
    wanted = [int(d) for d in devices if d is not None and int(d) >= 0]
    if not wanted:
        return
    count = torch.cuda.device_count()
    missing = [d for d in wanted if d >= count]
    if not missing:
        return
    raise ConfigurationError(
        f"{named} {device}: {_what_torch_sees(count)}; to run on the CPU, {_cpu_instead(named)} "
        f"({GPU_NEEDS})"
    )


def _cpu_instead(named: str) -> str:
    if named.startswith("--"):
        return f"leave {named} out (or give -1)"
    return f"set it to -1: -o '{{\"{named}\": -1}}'"


def _what_torch_sees(count: int) -> str:
    if torch.version.cuda is None:
        return f"no CUDA device here: torch {torch.__version__} is built without CUDA"
    if count == 0:
        return (
            f"no CUDA device here: torch {torch.__version__} (CUDA {torch.version.cuda}) "
            "finds no GPU or no NVIDIA driver"
        )
    return f"this machine has {count} CUDA device(s), numbered from 0"
