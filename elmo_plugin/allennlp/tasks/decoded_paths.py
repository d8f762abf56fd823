"""
Decoded tag paths as the class scores AllenNLP's `SpanBasedF1Measure` takes, so that the
metric scores what a model decodes (a CRF's or a constrained Viterbi path) and not the
per-token argmax of its raw scores.
"""

from typing import Sequence

import torch


def decoded_paths_to_one_hot(
    paths: Sequence[Sequence[int]], class_scores: torch.Tensor
) -> torch.Tensor:
    """
    One-hot "class probabilities" of the decoded paths: a tensor like `class_scores`
    (`(batch_size, num_tokens, num_tags)`, its dtype and device) with `1` at each path's tag
    of each of its tokens and `0` elsewhere, also on the padding past a path's end (which
    the metric's mask leaves out).

    # Parameters

    paths : `Sequence[Sequence[int]]`
        The decoded tag ids of each sequence of the batch, each no longer than `num_tokens`.
    class_scores : `torch.Tensor`
        `(batch_size, num_tokens, num_tags)` scores whose shape, dtype and device the result
        takes (their values are not used).
    """
    one_hot = torch.zeros_like(class_scores)
    for row, path in enumerate(paths):
        positions = torch.arange(len(path), device=class_scores.device)
        tags = torch.tensor(list(path), dtype=torch.long, device=class_scores.device)
        one_hot[row, positions, tags] = 1
    return one_hot
