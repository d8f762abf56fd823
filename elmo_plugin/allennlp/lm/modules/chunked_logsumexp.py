"""
The log-sum-exp of each row of `inputs @ weight.T + bias` without the whole logit matrix: the
sampled softmax's denominator, a few rows at a time, forward and backward.

Why: at a training batch of 64 sentences the sampled softmax scores ~2,800 predictions against
4,096 samples, an 11.5 M-entry logit matrix (46 MB in float32) that does not fit the cache.
Autograd's `logsumexp` reads and writes it some ten times (the product, the maximum, the
shifted exponentials, their sum, and the same again backward), and each pass costs about as
much as the bfloat16 product that made it (docs/performance.md has the figures). Here each
chunk of rows is made, reduced and dropped while it sits in the cache, and made again in the
backward pass (a product is cheaper than storing the matrix and reading it back): the same
sums in another order, so float32 stays exact to rounding.

On CUDA a chunk is as many rows as keep its logits within `CUDA_LOGITS_PER_CHUNK` (a GPU's
memory holds them, and every chunk is launches); the masked logits are found by comparing keys
on the device, never by reading positions back to the host.

With `dtype` bfloat16 the three products (logits, and the gradients of the inputs and of the
weights) run in bfloat16; the bias, the exponentials, their sums and the gradients returned
stay float32.
"""

from typing import Optional, Tuple

import torch

from elmo_plugin.elmo.execution import devices
from elmo_plugin.elmo.execution.compute_dtype import reduced_copy

# Rows per chunk on a CPU: at 4,096 samples a float32 chunk is 2 MB, within a core's share of
# the cache.
DEFAULT_ROWS_PER_CHUNK = 128
# Logits per chunk on CUDA: 256 MB in float32 (8,192 rows at the paper's 8,192 samples).
CUDA_LOGITS_PER_CHUNK = 2**26


def chunked_logsumexp(
    inputs: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    masked: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
    mask_value: float = -10000.0,
    dtype: torch.dtype = torch.float32,
    rows_per_chunk: Optional[int] = None,
) -> torch.Tensor:
    """
    `torch.logsumexp(inputs @ weight.T + bias, dim=1)` with the products in `dtype`, computed a
    chunk of rows at a time (`rows_per_chunk`, or a default for the device). `masked`, a pair of
    keys `(row_keys, column_keys)`, sets the logit of row `i` and column `j` to `mask_value`
    wherever `row_keys[i] == column_keys[j]` (the sampled softmax's accidental hits: targets and
    sampled classes). Differentiable in `inputs`, `weight` and `bias`; the masked logits get no
    gradient.
    """
    if rows_per_chunk is None:
        rows_per_chunk = (
            max(1, CUDA_LOGITS_PER_CHUNK // max(weight.size(0), 1))
            if devices.on_cuda(inputs)
            else DEFAULT_ROWS_PER_CHUNK
        )
    row_keys, column_keys = masked if masked is not None else (None, None)
    return _ChunkedLogSumExp.apply(
        inputs, weight, bias, row_keys, column_keys, mask_value, dtype, rows_per_chunk
    )


def _chunk_logits(
    inputs, weight, bias, row_keys, column_keys, mask_value, start, stop
) -> torch.Tensor:
    """The float32 logits of rows [start, stop), masked."""
    logits = torch.mm(inputs[start:stop], weight.t()).float().add_(bias)
    if row_keys is not None:
        hits = row_keys[start:stop].unsqueeze(1) == column_keys.unsqueeze(0)
        logits.masked_fill_(hits, mask_value)
    return logits


class _ChunkedLogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx, inputs, weight, bias, row_keys, column_keys, mask_value, dtype, rows_per_chunk
    ):
        # Held in float32 where the CPU has no native bfloat16 (`reduced_copy`).
        low_inputs, low_weight = reduced_copy(inputs, dtype), reduced_copy(weight, dtype)
        bias = bias.float()
        result = inputs.new_empty(inputs.size(0), dtype=torch.float32)
        for start in range(0, inputs.size(0), rows_per_chunk):
            stop = start + rows_per_chunk
            logits = _chunk_logits(
                low_inputs, low_weight, bias, row_keys, column_keys, mask_value, start, stop
            )
            result[start:stop] = torch.logsumexp(logits, dim=1)
        ctx.save_for_backward(low_inputs, low_weight, bias, row_keys, column_keys, result)
        ctx.settings = (mask_value, rows_per_chunk, inputs.dtype, weight.dtype)
        return result

    @staticmethod
    def backward(ctx, grad_result):
        low_inputs, low_weight, bias, row_keys, column_keys, result = ctx.saved_tensors
        mask_value, rows_per_chunk, inputs_dtype, weight_dtype = ctx.settings
        grad_inputs = torch.empty(low_inputs.shape, dtype=inputs_dtype, device=low_inputs.device)
        grad_weight = torch.zeros(low_weight.shape, dtype=torch.float32, device=low_weight.device)
        grad_bias = torch.zeros_like(bias)
        for start in range(0, low_inputs.size(0), rows_per_chunk):
            stop = start + rows_per_chunk
            logits = _chunk_logits(
                low_inputs, low_weight, bias, row_keys, column_keys, mask_value, start, stop
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
