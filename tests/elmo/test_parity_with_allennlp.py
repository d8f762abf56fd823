"""Our biLM and ELMo against AllenNLP's `Elmo`: same weights, same sentences, same outputs."""

from typing import Any

import pytest
import torch
from allennlp.modules.elmo import Elmo as AllenNlpElmo
from allennlp.modules.elmo import batch_to_ids

from elmo_plugin.elmo import Elmo, ElmoBiLm, save_bilm
from tests.published_sizes import published_options

SMALL = published_options("small")


def their_bilm(elmo: AllenNlpElmo) -> Any:
    """The private biLM (`_ElmoBiLm`) of AllenNLP's `Elmo`."""
    # Assigned in its `__init__` without a type mypy can infer.
    return elmo._elmo_lstm  # type: ignore[has-type]


def batches(sentences, size):
    for start in range(0, len(sentences), size):
        yield batch_to_ids(sentences[start : start + size])


def assert_stateless_parity(options, weights, sentences, batch_size=32):
    theirs = AllenNlpElmo(options, weights, 1, dropout=0.0).eval()
    ours = Elmo(options, weights, 1, dropout=0.0).eval()
    with torch.no_grad():
        for ids in batches(sentences, batch_size):
            their_bilm(theirs)._elmo_lstm.reset_states()
            expected = their_bilm(theirs)(ids)
            actual = ours.bilm(ids)
            assert torch.equal(expected["mask"], actual["mask"])
            assert len(expected["activations"]) == len(actual["activations"]) == 3
            for layer_theirs, layer_ours in zip(expected["activations"], actual["activations"]):
                torch.testing.assert_close(layer_ours, layer_theirs, atol=1e-5, rtol=0)


def test_fixture_weights_match_allennlp_on_real_sentences(
    elmo_options, elmo_weights, corpus_sentences
):
    assert_stateless_parity(elmo_options, elmo_weights, corpus_sentences(300))


def test_fixture_weights_match_allennlp_on_awkward_input(elmo_options, elmo_weights, sentences):
    awkward = [[], ["x" * 80, "naïve", "\x01\x02", "日本語"], ["a"]]
    assert_stateless_parity(elmo_options, elmo_weights, awkward + sentences, batch_size=8)


def test_random_small_size_matches_allennlp(tmp_path, corpus_sentences):
    torch.manual_seed(1)
    bilm = ElmoBiLm.from_options(SMALL)
    with torch.no_grad():
        for parameter in bilm.parameters():
            parameter.mul_(0.5)
    save_bilm(bilm, str(tmp_path))
    assert_stateless_parity(
        str(tmp_path / "options.json"), str(tmp_path / "weights.hdf5"), corpus_sentences(96)
    )


def test_stateful_matches_allennlp_across_batches_of_changing_size(
    elmo_options, elmo_weights, sentences
):
    theirs = AllenNlpElmo(
        options_file=elmo_options,
        weight_file=elmo_weights,
        num_output_representations=1,
        dropout=0.0,
    ).eval()
    ours = Elmo(elmo_options, elmo_weights, 1, dropout=0.0, stateful=True).eval()
    starts_and_sizes = [(0, 4), (4, 6), (10, 2), (12, 6), (18, 5)]
    with torch.no_grad():
        for start, size in starts_and_sizes:
            ids = batch_to_ids(sentences[start : start + size])
            expected = their_bilm(theirs)(ids)["activations"]
            actual = ours.bilm(ids)["activations"]
            for layer_theirs, layer_ours in zip(expected, actual):
                torch.testing.assert_close(layer_ours, layer_theirs, atol=1e-5, rtol=0)


def test_stateful_differs_from_stateless_on_the_second_batch(elmo_options, elmo_weights, sentences):
    stateful = Elmo(elmo_options, elmo_weights, 1, dropout=0.0, stateful=True).eval()
    stateless = Elmo(elmo_options, elmo_weights, 1, dropout=0.0).eval()
    first, second = batch_to_ids(sentences[:3]), batch_to_ids(sentences[3:6])
    with torch.no_grad():
        stateful.bilm(first)
        carried = stateful.bilm(second)["activations"][2]
        fresh = stateless.bilm(second)["activations"][2]
        assert not torch.allclose(carried, fresh, atol=1e-4)
        stateful.reset_states()
        torch.testing.assert_close(stateful.bilm(second)["activations"][2], fresh)


@pytest.mark.parametrize("do_layer_norm", [False, True])
def test_mixed_representations_match_allennlp(elmo_options, elmo_weights, sentences, do_layer_norm):
    mix = [0.3, -0.2, 0.5]
    theirs = AllenNlpElmo(
        elmo_options,
        elmo_weights,
        2,
        dropout=0.0,
        do_layer_norm=do_layer_norm,
        scalar_mix_parameters=mix,
    ).eval()
    ours = Elmo(
        elmo_options,
        elmo_weights,
        2,
        dropout=0.0,
        do_layer_norm=do_layer_norm,
        scalar_mix_parameters=mix,
    ).eval()
    ids = batch_to_ids(sentences[:7])
    with torch.no_grad():
        their_bilm(theirs)._elmo_lstm.reset_states()
        expected, actual = theirs(ids), ours(ids)
    assert torch.equal(expected["mask"], actual["mask"])
    for rep_theirs, rep_ours in zip(
        expected["elmo_representations"], actual["elmo_representations"]
    ):
        torch.testing.assert_close(rep_ours, rep_theirs, atol=1e-5, rtol=0)
