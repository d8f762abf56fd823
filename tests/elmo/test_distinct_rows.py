import pytest
import torch

from elmo_plugin.elmo.bilm.characters import distinct_rows as module
from elmo_plugin.elmo.bilm.characters.distinct_rows import distinct_rows, keyed_distinct_rows


def character_rows(count: int = 300) -> torch.Tensor:
    """Rows like a batch's character ids: few distinct words, each many times, 0 padding."""
    generator = torch.Generator().manual_seed(0)
    words = torch.randint(1, 263, (40, 50), generator=generator)
    words[:, 12:] = 261
    words[0] = 0
    return words[torch.randint(0, 40, (count,), generator=generator)]


def assert_distinct_rows_of(rows, distinct, inverse):
    assert torch.equal(distinct[inverse], rows)
    expected, _ = torch.unique(rows, dim=0, return_inverse=True)
    assert len(distinct) == len(expected)
    assert torch.equal(torch.unique(distinct, dim=0), expected)


def test_keyed_rows_are_the_distinct_rows_and_their_inverse():
    rows = character_rows()
    assert_distinct_rows_of(rows, *keyed_distinct_rows(rows))


def test_rows_that_share_a_key_are_still_told_apart(monkeypatch):
    # Weights of zero give every row the key 0: the check must catch it and fall back.
    monkeypatch.setattr(module, "_KEY_WEIGHTS", torch.zeros(64, dtype=torch.long))
    rows = character_rows()
    distinct, inverse = keyed_distinct_rows(rows)
    assert len(distinct) > 1
    assert_distinct_rows_of(rows, distinct, inverse)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("count", [0, 1, 300])
def test_distinct_rows_on_each_device(device, count):
    rows = character_rows(count).to(device)
    distinct, inverse = distinct_rows(rows)
    assert distinct.device == rows.device and inverse.device == rows.device
    assert_distinct_rows_of(rows.cpu(), distinct.cpu(), inverse.cpu())
