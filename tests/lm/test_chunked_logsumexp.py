from typing import Tuple

import pytest
import torch

from elmo_plugin.elmo.execution.compute_dtype import cpu_has_native_bfloat16
from elmo_plugin.allennlp.lm.modules.chunked_logsumexp import chunked_logsumexp


def _masked_positions(row_keys, column_keys):
    return row_keys.unsqueeze(1) == column_keys.unsqueeze(0)


def _autograd_reference(inputs, weight, bias, row_keys, column_keys, mask_value):
    logits = inputs @ weight.t() + bias
    masked = _masked_positions(row_keys, column_keys)
    return torch.logsumexp(logits.masked_fill(masked, mask_value), dim=1)


def _leaves(
    seed, num_rows=37, dim=6, num_columns=23
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The inputs, weight and bias, requiring gradients."""
    generator = torch.Generator().manual_seed(seed)
    return (
        torch.randn(num_rows, dim, generator=generator).requires_grad_(),
        torch.randn(num_columns, dim, generator=generator).requires_grad_(),
        torch.randn(num_columns, generator=generator).requires_grad_(),
    )


def _keys(masked_cells, num_rows=37, num_columns=23) -> Tuple[torch.Tensor, torch.Tensor]:
    """Row and column keys equal exactly at `masked_cells`' (row, column) pairs."""
    row_keys, column_keys = torch.full((num_rows,), -1), torch.full((num_columns,), -2)
    for key, (row, columns) in enumerate(masked_cells):
        row_keys[row] = key
        column_keys[list(columns)] = key
    return row_keys, column_keys


# Masked logits in the first, a middle and the last chunk, two in one row.
MASKED = _keys([(0, [3]), (5, [0, 22]), (16, [7]), (36, [11])])


def test_the_keys_mask_what_they_say():
    assert _masked_positions(*MASKED).nonzero().tolist() == [
        [0, 3],
        [5, 0],
        [5, 22],
        [16, 7],
        [36, 11],
    ]


@pytest.mark.parametrize("rows_per_chunk", [1, 8, 37, 100])
def test_values_and_gradients_equal_autograds_in_float32(rows_per_chunk):
    ours, theirs = _leaves(0), _leaves(0)
    result = chunked_logsumexp(*ours, MASKED, -10000.0, torch.float32, rows_per_chunk)
    expected = _autograd_reference(*theirs, *MASKED, -10000.0)
    torch.testing.assert_close(result, expected, rtol=1e-6, atol=1e-6)
    upstream = torch.randn(37, generator=torch.Generator().manual_seed(1))
    (result * upstream).sum().backward()
    (expected * upstream).sum().backward()
    for mine, reference in zip(ours, theirs):
        torch.testing.assert_close(mine.grad, reference.grad, rtol=1e-5, atol=1e-6)


def test_masked_logits_get_no_gradient():
    inputs, weight, bias = _leaves(2)
    chunked_logsumexp(inputs, weight, bias, MASKED, rows_per_chunk=8).sum().backward()
    # A column's bias gradient is the sum over the rows of its softmax probability among the
    # row's unmasked logits: zero where it is masked.
    logits = (inputs @ weight.t() + bias).detach()
    logits[_masked_positions(*MASKED)] = float("-inf")
    probabilities = torch.softmax(logits, dim=1)
    torch.testing.assert_close(bias.grad, probabilities.sum(dim=0), rtol=1e-5, atol=1e-6)


def test_no_rows():
    inputs, weight, bias = _leaves(3, num_rows=0)
    result = chunked_logsumexp(inputs, weight, bias)
    assert result.shape == (0,)
    result.sum().backward()
    assert inputs.grad is not None and weight.grad is not None
    assert inputs.grad.shape == (0, 6) and not weight.grad.any()


def test_bfloat16_products_stay_close_and_return_float32_gradients():
    ours, theirs = _leaves(4, dim=64), _leaves(4, dim=64)
    result = chunked_logsumexp(*ours, MASKED, dtype=torch.bfloat16, rows_per_chunk=8)
    expected = _autograd_reference(*theirs, *MASKED, -10000.0)
    assert result.dtype == torch.float32
    # bfloat16 keeps 8 bits of each logit: ~0.4% of logits of size ~8 here.
    torch.testing.assert_close(result, expected, rtol=0, atol=0.1)
    result.sum().backward()
    expected.sum().backward()
    for mine, reference in zip(ours, theirs):
        assert mine.grad is not None and reference.grad is not None
        assert mine.grad.dtype == torch.float32
        assert (mine.grad - reference.grad).abs().max() <= 2e-2 * reference.grad.abs().max()


@pytest.mark.skipif(not cpu_has_native_bfloat16(), reason="needs native bfloat16 (AVX512_BF16/AMX)")
def test_bfloat16_runs_natively_where_the_cpu_has_it(monkeypatch):
    seen = []
    original = torch.mm

    def recording_mm(a, b):
        seen.append(a.dtype)
        return original(a, b)

    monkeypatch.setattr(torch, "mm", recording_mm)
    inputs, weight, bias = _leaves(5)
    chunked_logsumexp(inputs, weight, bias, dtype=torch.bfloat16).sum().backward()
    assert seen and set(seen) == {torch.bfloat16}
