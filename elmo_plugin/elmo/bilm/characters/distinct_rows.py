from typing import Dict, Tuple

import torch

from elmo_plugin.elmo.execution import devices

# Each row's key is the dot product of its ids with these weights: below 2**46 each, so that a
# row of 50 character ids (below 2**9) sums below 2**61 without overflowing. Correctness never
# rests on the keys: every result is checked against the rows.
_KEY_WEIGHTS = torch.randint(
    0, 2**46, (64,), generator=torch.Generator().manual_seed(0), dtype=torch.long
)
# Their copy on each device, made once: a copy from the host a batch would wait on the device.
_KEY_WEIGHTS_ON: Dict[torch.device, torch.Tensor] = {}


def distinct_rows(rows: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    The distinct rows of a `(n, width)` integer tensor and, for each row, the index of its
    distinct row: `torch.unique(rows, dim=0, return_inverse=True)`, except that on CUDA the
    distinct rows come in an order of their own.

    On CUDA `torch.unique(dim=0)` merge-sorts the rows lexicographically (a 512-lane training
    step of the paper's biLM has 10,240 rows of 50 character ids), a visible share of the step
    (docs/performance.md has the figures). Here each row is reduced to one int64 key (a dot
    product with fixed random weights), the keys are radix-sorted by the one-dimensional
    `torch.unique`, and each key's first row stands for it.
    Two different rows share a key with a chance of about 2**-46 a pair; the result is checked
    against the rows (one comparison on the device, read back with the count `torch.unique`
    reads anyway) and, if any row differs from its stand-in, computed the exact way instead, so
    a collision costs time, never a wrong row. The CPU keeps `torch.unique(dim=0)`, which is
    fast there.
    """
    if not devices.keys_distinct_rows(rows) or not len(rows) or rows.size(1) > len(_KEY_WEIGHTS):
        return torch.unique(rows, dim=0, return_inverse=True)
    return keyed_distinct_rows(rows)


def keyed_distinct_rows(rows: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """`distinct_rows` by one key a row, on any device (the CPU runs it in the tests)."""
    weights = _KEY_WEIGHTS_ON.get(rows.device)
    if weights is None:
        weights = _KEY_WEIGHTS_ON[rows.device] = _KEY_WEIGHTS.to(rows.device)
    keys = (rows.long() * weights[: rows.size(1)]).sum(dim=1)
    unique_keys, inverse = torch.unique(keys, return_inverse=True)
    positions = torch.arange(len(rows), device=rows.device)
    first = torch.full_like(unique_keys, len(rows)).scatter_reduce_(0, inverse, positions, "amin")
    distinct = rows[first]
    if not bool((distinct[inverse] == rows).all()):
        return torch.unique(rows, dim=0, return_inverse=True)
    return distinct, inverse
