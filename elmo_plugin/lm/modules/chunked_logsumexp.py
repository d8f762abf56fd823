"""
The log-sum-exp of each row of `inputs @ weight.T + bias` without the whole logit matrix: the
sampled softmax's denominator, a few rows at a time, forward and backward.

Why: at a training batch of 64 sentences the sampled softmax scores ~2,800 predictions against
4,096 samples, an 11.5 M-entry logit matrix (46 MB in float32) that does not fit the cache.
Autograd's `logsumexp` reads and writes it some ten times (the product, the maximum, the
shifted exponentials, their sum, and the same again backward), and each pass costs about as
much as the bfloat16 product that made it (measured on a 2-core Zen 5, one thread: 18-28 ms a
pass, 7 ms the product). Here each chunk of rows is made, reduced and dropped while it sits in
the cache, and made again in the backward pass (a product is cheaper than storing the matrix
and reading it back): the same sums in another order, so float32 stays exact to rounding.

With `dtype` bfloat16 the three products (logits, and the gradients of the inputs and of the
weights) run in bfloat16; the bias, the exponentials, their sums and the gradients returned
stay float32.
"""

from typing import Optional, Tuple

import torch

from elmo_plugin.elmo.compute_dtype import reduced_copy

# Rows per chunk: at 4,096 samples a float32 chunk is 2 MB, within a core's share of the cache.
DEFAULT_ROWS_PER_CHUNK = 128


def chunked_logsumexp(
    inputs: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    masked: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
    mask_value: float = -10000.0,
    dtype: torch.dtype = torch.float32,
    rows_per_chunk: int = DEFAULT_ROWS_PER_CHUNK,
) -> torch.Tensor:
    """
    `torch.logsumexp(inputs @ weight.T + bias, dim=1)`, with the logits at `masked` (rows and
    columns, rows ascending) set to `mask_value` first, computed `rows_per_chunk` rows at a
    time with the products in `dtype`. Differentiable in `inputs`, `weight` and `bias`; the
    masked logits get no gradient.
    """
    rows, columns = masked if masked is not None else (inputs.new_zeros(0, dtype=torch.long),) * 2
    return _ChunkedLogSumExp.apply(
        inputs, weight, bias, rows, columns, mask_value, dtype, rows_per_chunk
    )


def _chunk_logits(inputs, weight, bias, rows, columns, mask_value, start, stop) -> torch.Tensor:
    """The float32 logits of rows [start, stop), masked."""
    logits = torch.mm(inputs[start:stop], weight.t()).float().add_(bias)
    first, last = torch.searchsorted(rows, torch.tensor([start, stop], device=rows.device))
    if last > first:
        logits[rows[first:last] - start, columns[first:last]] = mask_value
    return logits


class _ChunkedLogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, weight, bias, rows, columns, mask_value, dtype, rows_per_chunk):
        # Held in float32 where the CPU has no native bfloat16 (`reduced_copy`).
        low_inputs, low_weight = reduced_copy(inputs, dtype), reduced_copy(weight, dtype)
        bias = bias.float()
        result = inputs.new_empty(inputs.size(0), dtype=torch.float32)
        for start in range(0, inputs.size(0), rows_per_chunk):
            stop = start + rows_per_chunk
            logits = _chunk_logits(
                low_inputs, low_weight, bias, rows, columns, mask_value, start, stop
            )
            result[start:stop] = torch.logsumexp(logits, dim=1)
        ctx.save_for_backward(low_inputs, low_weight, bias, rows, columns, result)
        ctx.settings = (mask_value, rows_per_chunk, inputs.dtype, weight.dtype)
        return result

    @staticmethod
    def backward(ctx, grad_result):
        low_inputs, low_weight, bias, rows, columns, result = ctx.saved_tensors
        mask_value, rows_per_chunk, inputs_dtype, weight_dtype = ctx.settings
        grad_inputs = torch.empty(low_inputs.shape, dtype=inputs_dtype, device=low_inputs.device)
        grad_weight = torch.zeros(low_weight.shape, dtype=torch.float32, device=low_weight.device)
        grad_bias = torch.zeros_like(bias)
        for start in range(0, low_inputs.size(0), rows_per_chunk):
            stop = start + rows_per_chunk
            logits = _chunk_logits(
                low_inputs, low_weight, bias, rows, columns, mask_value, start, stop
            )
            # d logsumexp / d logit = softmax; a masked logit's exp(-10000 - lse) is zero.
            grad_logits = logits.sub_(result[start:stop, None]).exp_()
            grad_logits.mul_(grad_result[start:stop, None])
            grad_bias += grad_logits.sum(dim=0)
            low_grad = grad_logits.to(low_weight.dtype)
            grad_inputs[start:stop] = torch.mm(low_grad, low_weight)
            grad_weight += torch.mm(low_grad.t(), low_inputs[start:stop])
        return (
            grad_inputs,
            grad_weight.to(weight_dtype),
            grad_bias,
            None,
            None,
            None,
            None,
            None,
        )
