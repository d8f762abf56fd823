"""
The LSTM step's recurrent product, `gates + hidden @ state_weight`, through oneDNN with the
weight reordered once into oneDNN's blocked layout, for inference on a CPU (float32, or
bfloat16 where the CPU has it natively).

Why: every step multiplies the few rows still running (17 on average at batch 32) by the whole
recurrent weight, and at the "original" size (512 x 16384 per direction, 64 MB) that product is
most of the biLM's time. With the torch 2.15 of the current profile, MKL runs it slower than
oneDNN on a pre-packed weight (of the row counts measured, equal at one row only;
docs/performance.md has the figures; `benchmarks/lstm_step_memory_bound.py` measures the whole
step). The results differ from MKL's by summation order only (9e-7 of the largest value; MKL's
own are 4e-7 from float64). The same holds in bfloat16 (`compute_dtype`, on a CPU with native
bfloat16) against the plain bfloat16 product, with identical values; the product is added to
the float32 gate inputs in float32.

When: only where it cannot change training or the smaller sizes. The packed copy is made from
the weights without autograd, so it serves only a forward pass that no gradient flows through (a
frozen biLM, `torch.no_grad()`); for small weights (the "small" size's 128 x 4096) MKL is as fast
or faster, so below `MIN_WEIGHT_ELEMENTS` nothing changes; the torch of the allennlp-2.10 profile
has no such operator, and then nothing changes either. The packed copy is kept across forward
passes until the weight changes (its version counter or storage), like `ReducedCopies`.
"""

from typing import Callable, List, Optional, Tuple

import torch

from elmo_plugin.elmo.execution import devices
from elmo_plugin.elmo.execution.compute_dtype import cpu_has_native_bfloat16

# At and above this many elements per direction a pre-packed oneDNN product beat MKL's here.
MIN_WEIGHT_ELEMENTS = 4 * 2**20


def _operators() -> Optional[Tuple[Callable, Callable]]:
    """oneDNN's linear on a packed weight and its packing, where this torch has them."""
    try:
        return torch.ops.mkldnn._linear_pointwise, torch.ops.mkldnn._reorder_linear_weight
    except (AttributeError, RuntimeError):
        return None


_OPERATORS = _operators() if torch.backends.mkldnn.is_available() else None


class PackedStateProduct:
    """The packed recurrent weight of one `BiLstmLayer` (both directions) and its product."""

    def __init__(self) -> None:
        self._key: Optional[Tuple] = None
        self._packed: List[torch.Tensor] = []

    @staticmethod
    def applies_to(state_weight: torch.Tensor) -> bool:
        """Whether the packed product serves this `(2, hidden, 4 * cell)` weight now."""
        return (
            _OPERATORS is not None
            and devices.packs_for_onednn(state_weight)
            and (
                state_weight.dtype == torch.float32
                or (state_weight.dtype == torch.bfloat16 and cpu_has_native_bfloat16())
            )
            and state_weight[0].numel() >= MIN_WEIGHT_ELEMENTS
            and not (torch.is_grad_enabled() and state_weight.requires_grad)
        )

    def prepare(self, state_weight: torch.Tensor, rows: int) -> None:
        """Packs `state_weight` for products of about `rows` rows, unless already packed."""
        assert _OPERATORS is not None
        key = (state_weight.data_ptr(), state_weight._version, state_weight.device)
        if key == self._key:
            return
        _, reorder = _OPERATORS
        with torch.no_grad():
            # oneDNN's linear takes the weight as (out, in), one direction at a time.
            self._packed = [reorder(d.t().contiguous(), rows) for d in state_weight]
        self._key = key

    def add_product(self, sums: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """`sums + hidden @ state_weight` for `(2, rows, hidden)` states, per direction."""
        assert _OPERATORS is not None
        linear, _ = _OPERATORS
        products = [
            linear(hidden[d], packed, None, "none", [], "") for d, packed in enumerate(self._packed)
        ]
        # The stacked products are a fresh tensor: in float32 `.float()` is that tensor itself,
        # which the sums are added to in place; in bfloat16 the sum is float32.
        return torch.stack(products).float().add_(sums)

    def clear(self) -> None:
        self._key, self._packed = None, []
