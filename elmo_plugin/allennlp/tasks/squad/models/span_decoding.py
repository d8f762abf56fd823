"""
Choosing the answer span from start and end scores. AllenNLP core has no span decoder;
allennlp-models' `rc.models.utils.get_best_span` (not importable at run time: `docs/install.md`)
takes neither a mask (its callers fill padding with a large negative first) nor a maximum span
length, which `best_span` takes both of.
"""

from typing import Optional

import torch


def best_span(
    span_start_logits: torch.Tensor,
    span_end_logits: torch.Tensor,
    mask: torch.BoolTensor,
    max_span_length: Optional[int] = None,
) -> torch.Tensor:
    """
    The span `(start, end)` maximising `start_logit + end_logit` over unmasked positions with
    `start <= end` and at most `max_span_length` tokens, for each batch row.

    # Parameters

    span_start_logits : `torch.Tensor`
        `(batch_size, passage_length)`; log-probabilities or any scores that add.
    span_end_logits : `torch.Tensor`
        `(batch_size, passage_length)`.
    mask : `torch.BoolTensor`
        `(batch_size, passage_length)`, true for real tokens (at least one per row).
    max_span_length : `int`, optional
        No limit when not given.

    # Returns

    `(batch_size, 2)` long: inclusive start and end token indices.
    """
    if span_start_logits.dim() != 2 or span_start_logits.shape != span_end_logits.shape:
        raise ValueError(
            "span logits must both be (batch_size, passage_length), got "
            f"{tuple(span_start_logits.shape)} and {tuple(span_end_logits.shape)}"
        )
    batch_size, passage_length = span_start_logits.shape
    lowest = torch.finfo(span_start_logits.dtype).min
    # A quarter of the lowest float: two of them still add up to a finite number.
    very_negative = lowest / 4
    start = span_start_logits.masked_fill(~mask, very_negative)
    end = span_end_logits.masked_fill(~mask, very_negative)
    scores = start.unsqueeze(2) + end.unsqueeze(1)
    scores = scores.masked_fill(
        ~_allowed_spans(passage_length, max_span_length, mask.device), lowest
    )
    flat_best = scores.view(batch_size, -1).argmax(dim=-1)
    return torch.stack(
        [torch.div(flat_best, passage_length, rounding_mode="floor"), flat_best % passage_length],
        dim=-1,
    )


def _allowed_spans(
    passage_length: int, max_span_length: Optional[int], device: torch.device
) -> torch.Tensor:
    ones = torch.ones(passage_length, passage_length, dtype=torch.bool, device=device)
    allowed = ones.triu()
    if max_span_length is not None:
        allowed &= ~ones.triu(diagonal=max_span_length)
    return allowed
