"""Compares ElmoBiLstm's fused dense path with its packed path, forward and backward; run as a
script (`python tests/elmo/fused_lstm_check.py cpu|cuda`) it checks both dtypes and prints
which gate kernels ran (Triton under TRITON_INTERPRET=1 or on CUDA, else torch)."""

import copy
import dataclasses
import sys
from typing import Optional

import torch

from elmo_plugin.elmo.bilm.lstm.module import ElmoBiLstm, LstmState
from elmo_plugin.elmo.bilm.lstm.triton_gates import uses_triton

# float32: the same sums in another order. bfloat16: the weights' gradients are sums of bfloat16
# products in another order (one product over all steps against one a step), so a few bfloat16
# ulps of each tensor's largest value.
TOLERANCES = {torch.float32: 1e-5, torch.bfloat16: 2e-2}


def compare_paths(
    device: str, dtype: torch.dtype, cell_clip: Optional[float], proj_clip: Optional[float]
) -> None:
    torch.manual_seed(0)
    packed = ElmoBiLstm(
        6, 4, 8, 2, cell_clip=cell_clip, proj_clip=proj_clip, compute_dtype=dtype
    ).to(device)
    # Weights large enough that the clipping binds somewhere.
    with torch.no_grad():
        for parameter in packed.parameters():
            parameter.mul_(3.0)
    packed.execution = dataclasses.replace(packed.execution, fused=False)
    fused = copy.deepcopy(packed)
    fused.execution = dataclasses.replace(fused.execution, fused=True)
    lengths = torch.tensor([7, 3, 0, 5, 1], device=device)
    mask = torch.arange(7, device=device).unsqueeze(0) < lengths.unsqueeze(1)
    inputs = torch.randn(5, 7, 6, device=device)
    initial = LstmState(
        torch.randn(2, 2, 5, 4, device=device), torch.randn(2, 2, 5, 8, device=device)
    )
    weights = [torch.randn(5, 7, 8, device=device) for _ in range(2)]
    results = []
    for lstm in (packed, fused):
        leaf_inputs = inputs.clone().requires_grad_()
        leaf_initial = LstmState(*(s.clone().requires_grad_() for s in initial))
        outputs, final = lstm(leaf_inputs, mask, leaf_initial)
        loss = sum((o * w).sum() for o, w in zip(outputs, weights))
        loss = loss + (final.hidden * 0.5).sum() + (final.memory * 0.25).sum()
        loss.backward()
        results.append(
            [*outputs, final.hidden, final.memory, leaf_inputs.grad]
            + [leaf_initial.hidden.grad, leaf_initial.memory.grad]
            + [p.grad for p in lstm.parameters()]
        )
    for expected, actual in zip(*results):
        _assert_close(actual, expected, dtype)
    # The clipping bound somewhere, else the test would not check it.
    if cell_clip:
        assert results[0][3].abs().max() == cell_clip
    # Inference, dense and sorted by length (the finished sequences' rows skipped).
    dense = copy.deepcopy(fused)
    dense.execution = dataclasses.replace(dense.execution, sorted_inference=False)
    with torch.no_grad():
        inferred = [lstm(inputs, mask, initial) for lstm in (packed, fused, dense)]
    expected_results = [*inferred[0][0], *inferred[0][1]]
    for outputs, final in inferred[1:]:
        for expected, actual in zip(expected_results, [*outputs, *final]):
            _assert_close(actual, expected, dtype)


def _assert_close(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype) -> None:
    tolerance = TOLERANCES[dtype]
    scale = 1.0 if dtype == torch.float32 else max(float(expected.abs().max()), 1.0)
    torch.testing.assert_close(actual, expected, rtol=tolerance, atol=tolerance * scale)


if __name__ == "__main__":
    device = sys.argv[1]
    for dtype in (torch.float32, torch.bfloat16):
        for clips in ((3.0, 3.0), (None, None)):
            compare_paths(device, dtype, *clips)
    probe = torch.zeros(1, device=device)
    print("kernels:", "triton" if uses_triton(probe) else "torch")
