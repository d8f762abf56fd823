from typing import cast

import pytest
import torch

from elmo_plugin.allennlp.tasks.squad.models import best_span


def decode(start, end, mask=None, max_span_length=None):
    start = torch.tensor([start], dtype=torch.float)
    end = torch.tensor([end], dtype=torch.float)
    mask = torch.ones_like(start, dtype=torch.bool) if mask is None else torch.tensor([mask])
    return tuple(best_span(start, end, mask, max_span_length)[0].tolist())


def test_picks_the_highest_scoring_pair():
    assert decode([0, 5, 1, 0], [0, 0, 1, 6]) == (1, 3)


def test_start_never_follows_end():
    # Unconstrained, start 2 + end 0 (18) would win; (2, 2) scores 10.
    assert decode([0, 1, 9], [9, 0, 1]) == (2, 2)


def test_respects_the_maximum_span_length():
    assert decode([5, 0, 0, 0], [0, 1, 0, 5]) == (0, 3)
    assert decode([5, 0, 0, 0], [0, 1, 0, 5], max_span_length=2) == (0, 1)
    assert decode([5, 0, 0, 0], [0, 1, 0, 5], max_span_length=1) == (0, 0)


def test_ignores_padding():
    assert decode([0, 2, 9], [0, 1, 9], mask=[True, True, False]) == (1, 1)


def test_rows_are_decoded_independently():
    start = torch.tensor([[0.0, 5.0, 1.0], [3.0, 0.0, 0.0]])
    end = torch.tensor([[0.0, 0.0, 6.0], [0.0, 4.0, 0.0]])
    # A bool tensor, typed Tensor by torch.
    mask = cast(torch.BoolTensor, torch.tensor([[True, True, True], [True, True, False]]))
    assert best_span(start, end, mask).tolist() == [[1, 2], [0, 1]]


def test_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="must both be"):
        mask = cast(torch.BoolTensor, torch.ones(2, 3, dtype=torch.bool))
        best_span(torch.zeros(2, 3), torch.zeros(2, 4), mask)
