"""
The compute dtype of the execution setting (`Execution.compute_dtype`, and the older top-level
`compute_dtype` of every entry point beside it: `Elmo`, the `elmo` embedder, the `bilm` model,
`ElmoEmbedder`, `elmo-embed`): its names, their parsing, and the reduced-precision copies of the
weights it runs with. The entry points take a name and parse it once (`Execution.resolve`);
inside the core it is a `torch.dtype`, given to each module that computes with it at
construction (`ElmoBiLm.from_options`, `load_bilm`), and changed after construction only
through `ElmoBiLm.set_compute_dtype` (which `ElmoBiLm.set_execution` calls).

"float32" (the default) is exact: nothing is cast. "bfloat16" runs the matrix products and the
convolutions in bfloat16 (float32 accumulation inside the kernels, faster than float32 on CPUs
with AVX512_BF16, half the memory traffic per weight, and the same on CUDA) while the
parameters stay float32 (the master weights in training), the LSTM's gate nonlinearities,
memory update and clipping run in float32, and every output is float32. Nothing here is
device-specific, so the same option serves CUDA.

On a CPU without native bfloat16 arithmetic (no AVX512_BF16 or AMX: e.g. AMD Zen 3, or a virtual
machine that exposes AVX2 only) torch's bfloat16 kernels are emulated: slower than float32
(docs/performance.md has the figure), and with torch 1.12 they lose accuracy too (layers
0.07-0.12 from float32, against the goal of 2e-2). There the weights are still rounded to
bfloat16, but held in float32 and multiplied in float32: the same rounding of the weights,
float32 speed, and a warning once per process that bfloat16 brings no speed on that machine.
"""

import functools
import logging
from typing import Dict, Iterable, List, Optional, Tuple

import torch

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution import devices

logger = logging.getLogger(__name__)

FLOAT32 = "float32"
COMPUTE_DTYPES: Dict[str, torch.dtype] = {FLOAT32: torch.float32, "bfloat16": torch.bfloat16}

_warned_about_emulated_bfloat16 = False


def parse_compute_dtype(name: str, named: str = "compute_dtype") -> torch.dtype:
    """The `torch.dtype` of a `compute_dtype` name, or a `ConfigurationError` naming the choices
    and where the name was given (`named`)."""
    if name not in COMPUTE_DTYPES:
        raise ConfigurationError(f"{named} must be one of {sorted(COMPUTE_DTYPES)}, got {name!r}")
    return COMPUTE_DTYPES[name]


@functools.lru_cache(maxsize=None)
def _onednn_has_native_bfloat16() -> bool:
    try:
        check = torch.ops.mkldnn._is_mkldnn_bf16_supported
    except (AttributeError, RuntimeError):
        return False
    return bool(torch.backends.mkldnn.is_available() and check())


def cpu_has_native_bfloat16() -> bool:
    """Whether oneDNN runs bfloat16 products natively on this CPU (AVX512_BF16 or AMX)."""
    return _onednn_has_native_bfloat16()


def reduced_copy(weight: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """`weight` rounded to `dtype`; held in float32 where the CPU has no native bfloat16 (see
    the module's docstring), so that its products run in float32."""
    reduced = weight.to(dtype)
    if dtype == torch.bfloat16 and devices.emulates_bfloat16(
        weight.device, cpu_has_native_bfloat16()
    ):
        return reduced.float()
    return reduced


def warn_if_bfloat16_is_emulated(dtype: torch.dtype, device: torch.device) -> None:
    """Logs once per process that bfloat16 on this CPU is slower than float32, where it is."""
    global _warned_about_emulated_bfloat16
    if _warned_about_emulated_bfloat16 or dtype != torch.bfloat16:
        return
    if devices.emulates_bfloat16(device, cpu_has_native_bfloat16()):
        _warned_about_emulated_bfloat16 = True
        logger.warning(
            "compute_dtype bfloat16: this CPU has no native bfloat16 arithmetic (AVX512_BF16 "
            "or AMX), where torch's bfloat16 products are slower than float32 (and, with torch "
            "1.12, less accurate): the weights are rounded to bfloat16 but multiplied in "
            "float32, so bfloat16 brings no speed on this machine; float32 is as fast and exact"
        )


def compute_dtype_name(dtype: torch.dtype) -> str:
    return next(name for name, known in COMPUTE_DTYPES.items() if known == dtype)


def plus_float32(product: torch.Tensor, addend: torch.Tensor) -> torch.Tensor:
    """`product + addend` in float32, for a reduced-precision `product`: converted first, then
    added in place, because the mixed-dtype addition of type promotion casts element by element,
    many times slower (docs/performance.md has the figures)."""
    if product.dtype == torch.float32:
        return product + addend  # `.float()` would be `product` itself, which add_ would change
    return product.float().add_(addend)


class ReducedCopies:
    """
    The weights of one module in the compute dtype, made once per forward pass of the whole
    module (never per LSTM step: plain `torch.autocast` casts them again at every step, which
    made "original"-size ELMo slower than float32).

    While no gradient can flow to them (a frozen biLM, or `torch.no_grad()`), the copies are
    also kept across forward passes, until a parameter changes: its version counter (bumped by
    every in-place update: an optimizer step, `load_state_dict`) or its storage (`.to()`) then
    differs. Casting the "original" biLM's 75M LSTM weights takes a good part of a batch's time
    on a CPU (docs/performance.md has the figure). With gradients, the cast is part of the
    graph, so the float32 parameters receive the gradients.
    """

    def __init__(self) -> None:
        self._key: Optional[Tuple] = None
        self._copies: List[torch.Tensor] = []

    def get(self, weights: Iterable[torch.Tensor], dtype: torch.dtype) -> List[torch.Tensor]:
        weights = list(weights)
        if torch.is_grad_enabled() and any(w.requires_grad for w in weights):
            self.clear()
            warn_if_bfloat16_is_emulated(dtype, weights[0].device)
            return [reduced_copy(w, dtype) for w in weights]
        key = (dtype,) + tuple((w.data_ptr(), w._version, w.device) for w in weights)
        if key != self._key:
            warn_if_bfloat16_is_emulated(dtype, weights[0].device)
            with torch.no_grad():
                self._copies = [reduced_copy(w, dtype) for w in weights]
            self._key = key
        return self._copies

    def clear(self) -> None:
        self._key, self._copies = None, []
