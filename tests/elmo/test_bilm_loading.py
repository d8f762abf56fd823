"""`load_bilm`, the one loader of a biLM (`Elmo`'s too): options found inline, in a model's
vocabulary or in the file; weights read, a missing file tolerated for a biLM inside a model;
and the provenance of such a biLM's weights checked at its first forward pass."""

import json

import pytest
import torch
from allennlp.data import Vocabulary
from allennlp.modules.elmo import batch_to_ids

from elmo_plugin.elmo import ActivationCache, Elmo, ElmoBiLm, load_bilm
from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.formats.options_record import OPTIONS_NAMESPACE, recorded_options

SENTENCES = [["The", "cat", "sat", "."], ["Hello", "world"]]


def _activations(bilm: ElmoBiLm) -> torch.Tensor:
    with torch.no_grad():
        return torch.stack(bilm.eval()(batch_to_ids(SENTENCES))["activations"])


def test_elmo_builds_its_bilm_with_the_loader(elmo_options, elmo_weights, monkeypatch):
    import elmo_plugin.elmo.modules.elmo as elmo_module

    calls = []

    def recording_load_bilm(*args, **kwargs):
        calls.append(kwargs)
        return load_bilm(*args, **kwargs)

    monkeypatch.setattr(elmo_module, "load_bilm", recording_load_bilm)
    elmo = Elmo(elmo_options, elmo_weights, dropout=0.0)
    assert [call["in_model"] for call in calls] == [True]
    torch.testing.assert_close(
        _activations(elmo.bilm), _activations(load_bilm(elmo_options, elmo_weights))
    )


def test_options_come_inline_then_from_the_vocabulary_then_from_the_file(
    elmo_options, elmo_weights, tmp_path
):
    with open(elmo_options) as handle:
        options = json.load(handle)
    gone = str(tmp_path / "gone.json")
    vocab = Vocabulary()
    inline = load_bilm(gone, elmo_weights, known_options={gone: options}, vocab=vocab)
    assert recorded_options(vocab, gone) == options
    assert vocab.get_vocab_size(OPTIONS_NAMESPACE) == 3  # padding, unknown and the one record
    from_vocabulary = load_bilm(gone, elmo_weights, vocab=vocab)
    torch.testing.assert_close(_activations(from_vocabulary), _activations(inline))
    with pytest.raises(MissingFileError, match="gone.json"):
        load_bilm(gone, elmo_weights)


def test_a_missing_weight_file_is_an_error_at_once_outside_a_model(elmo_options, tmp_path):
    with pytest.raises(MissingFileError, match="deleted.hdf5"):
        load_bilm(elmo_options, str(tmp_path / "deleted.hdf5"))


def test_inside_a_model_missing_weights_must_come_from_a_state_dict(
    elmo_options, elmo_weights, tmp_path
):
    bilm = load_bilm(elmo_options, str(tmp_path / "deleted.hdf5"), in_model=True)
    with pytest.raises(ConfigurationError, match="deleted.hdf5.*not found.*No loaded model state"):
        _activations(bilm)
    with pytest.raises(ConfigurationError, match="No loaded model state"):  # every time until then
        _activations(bilm)
    trained = load_bilm(elmo_options, elmo_weights)
    bilm.load_state_dict(trained.state_dict())
    torch.testing.assert_close(_activations(bilm), _activations(trained))


def test_inside_a_model_weights_changed_before_the_first_forward_pass_are_refused(
    elmo_options, elmo_weights
):
    bilm = load_bilm(elmo_options, elmo_weights, in_model=True)
    with torch.no_grad():
        bilm.character_encoder.projection.weight.mul_(2.0)
    with pytest.raises(ConfigurationError, match=r"character_encoder\.projection\.weight changed"):
        _activations(bilm)
    outside = load_bilm(elmo_options, elmo_weights)
    with torch.no_grad():
        outside.character_encoder.projection.weight.mul_(2.0)
    _activations(outside)  # a biLM of its own: nothing to check


def test_the_check_leaves_the_bilm_after_its_first_forward_pass(elmo_options, elmo_weights):
    bilm = load_bilm(elmo_options, elmo_weights, in_model=True)
    assert len(bilm._forward_pre_hooks) == 1
    _activations(bilm)
    assert len(bilm._forward_pre_hooks) == 0


def test_missing_weights_with_a_cache_still_come_from_a_state_dict(
    elmo_options, elmo_weights, sentences, tmp_path
):
    """The first forward pass fails before the cache stores anything, so the weights a state
    dict brings afterwards are the cache's one biLM."""
    ids = batch_to_ids(sentences[:3])
    trained = Elmo(elmo_options, elmo_weights, dropout=0.0).eval()
    loaded = Elmo(
        elmo_options,
        str(tmp_path / "deleted.hdf5"),
        dropout=0.0,
        activation_cache=ActivationCache(),
    ).eval()
    with torch.no_grad():
        with pytest.raises(ConfigurationError, match="No loaded model state"):
            loaded(ids)
        loaded.load_state_dict(trained.state_dict())
        torch.testing.assert_close(
            loaded(ids)["elmo_representations"][0],
            trained(ids)["elmo_representations"][0],
            atol=1e-6,
            rtol=0,
        )
