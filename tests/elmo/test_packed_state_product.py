"""The oneDNN product on a packed recurrent weight (`elmo/packed_state_product.py`): used only
for inference on large weights (float32, or bfloat16 where the CPU has it natively), equal to
MKL's `baddbmm` path to float rounding, packed again when a weight changes, and never in a pass
that gradients flow through."""

import pytest
import torch

from elmo_plugin.elmo import ElmoBiLstm
from elmo_plugin.elmo.bilm.lstm import packed_state_product
from elmo_plugin.elmo.bilm.lstm.packed_state_product import PackedStateProduct
from elmo_plugin.elmo.execution.compute_dtype import cpu_has_native_bfloat16
from elmo_plugin.elmo.execution.settings import Execution

needs_operators = pytest.mark.skipif(
    packed_state_product._OPERATORS is None,
    reason="this torch has no oneDNN packed linear (the allennlp-2.10 profile's torch 1.12)",
)


@pytest.fixture
def every_weight_is_large(monkeypatch):
    monkeypatch.setattr(packed_state_product, "MIN_WEIGHT_ELEMENTS", 0)


def lstm_and_batch(compute_dtype: torch.dtype = torch.float32):
    torch.manual_seed(0)
    # Torch's thread count fixed: a race of thread counts would run a layer twice and count
    # its products twice (`recurrence_threads`).
    lstm = ElmoBiLstm(
        16,
        8,
        32,
        num_layers=2,
        cell_clip=3,
        proj_clip=3,
        compute_dtype=compute_dtype,
        execution=Execution(adaptive_threads=False),
    )
    lengths = torch.tensor([9, 7, 7, 3, 1])
    mask = torch.arange(9).unsqueeze(0) < lengths.unsqueeze(1)
    return lstm, torch.randn(5, 9, 16), mask


def count_packed_products(monkeypatch):
    calls = []
    original = PackedStateProduct.add_product

    def counting(self, sums, hidden):
        calls.append(hidden.size(1))
        return original(self, sums, hidden)

    monkeypatch.setattr(PackedStateProduct, "add_product", counting)
    return calls


@needs_operators
def test_inference_uses_the_packed_product_and_equals_the_mkl_path(
    monkeypatch, every_weight_is_large
):
    lstm, inputs, mask = lstm_and_batch()
    calls = count_packed_products(monkeypatch)
    exact, exact_state = lstm(inputs, mask)  # gradients flow: MKL's baddbmm
    assert calls == []
    with torch.no_grad():
        packed, packed_state = lstm(inputs, mask)
    assert calls == [5, 4, 4, 3, 3, 3, 3, 1, 1] * 2  # every step of both layers
    for a, b in zip(exact + list(exact_state), packed + list(packed_state)):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)


@needs_operators
def test_a_changed_weight_is_packed_again(every_weight_is_large):
    lstm, inputs, mask = lstm_and_batch()
    lstm.requires_grad_(False)
    before = lstm(inputs, mask)[0][-1]
    with torch.no_grad():
        lstm.layers[1].state_weight.mul_(0.5)
    after = lstm(inputs, mask)[0][-1]
    with torch.enable_grad():
        lstm.requires_grad_(True)
        reference = lstm(inputs, mask)[0][-1]
    assert not torch.allclose(before, after)
    assert torch.allclose(after, reference, rtol=1e-5, atol=1e-6)


def test_small_weights_and_training_keep_mkl(monkeypatch):
    lstm, inputs, mask = lstm_and_batch()
    calls = count_packed_products(monkeypatch)
    with torch.no_grad():
        lstm(inputs, mask)  # 8 x 128 per direction: far below the size where oneDNN wins
    assert calls == []
    assert not PackedStateProduct.applies_to(torch.zeros(2, 512, 16384, requires_grad=True))
    bfloat16 = torch.zeros(2, 512, 16384, dtype=torch.bfloat16)
    assert PackedStateProduct.applies_to(bfloat16) == (
        packed_state_product._OPERATORS is not None and cpu_has_native_bfloat16()
    )


@needs_operators
@pytest.mark.skipif(not cpu_has_native_bfloat16(), reason="needs native bfloat16 (AVX512_BF16/AMX)")
def test_bfloat16_inference_uses_the_packed_product_and_equals_the_plain_one(
    monkeypatch, every_weight_is_large
):
    lstm, inputs, mask = lstm_and_batch(torch.bfloat16)
    calls = count_packed_products(monkeypatch)
    plain, plain_state = lstm(inputs, mask)  # gradients flow: a plain bfloat16 product
    assert calls == []
    with torch.no_grad():
        packed, packed_state = lstm(inputs, mask)
    assert calls == [5, 4, 4, 3, 3, 3, 3, 1, 1] * 2
    for a, b in zip(plain + list(plain_state), packed + list(packed_state)):
        assert a.dtype == b.dtype == torch.float32
        assert torch.allclose(a, b, rtol=1e-2, atol=1e-2)
