"""Naming the biLM: the shipped one from any directory, options inline, weights from an archive."""

import json
import os

import pytest
import torch
from allennlp.modules.elmo import batch_to_ids

from elmo_plugin.elmo import ActivationCache, Elmo
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import SHIPPED_BILM, package_path

SENTENCES = [["The", "cat", "sat", "."], ["Hello", "world"]]


def _vectors(elmo: Elmo) -> torch.Tensor:
    with torch.no_grad():
        return elmo.eval()(batch_to_ids(SENTENCES))["elmo_representations"][0]


def test_the_shipped_bilm_resolves_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    elmo = Elmo(f"{SHIPPED_BILM}/options.json", f"{SHIPPED_BILM}/weights.hdf5", dropout=0.0)
    assert _vectors(elmo).shape == (2, 4, 256)


def test_a_missing_bilm_file_names_the_path_tried_the_directory_and_the_fix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError) as error:
        Elmo("models/options.json", None)
    message = str(error.value)
    assert os.path.join(str(tmp_path), "models", "options.json") in message
    assert f"relative to the working directory {tmp_path}" in message
    assert "options_file" in message and f"{SHIPPED_BILM}/options.json" in message


def test_known_options_stand_in_for_the_file_of_that_name(elmo_options, elmo_weights, tmp_path):
    with open(elmo_options) as handle:
        known = {"gone/options.json": json.load(handle)}
    torch.manual_seed(0)
    inline = _vectors(Elmo("gone/options.json", elmo_weights, dropout=0.0, known_options=known))
    torch.manual_seed(0)
    from_file = _vectors(Elmo(elmo_options, elmo_weights, dropout=0.0, known_options=known))
    torch.testing.assert_close(inline, from_file)
    with pytest.raises(ConfigurationError, match="not found"):  # other names are still read
        Elmo(str(tmp_path / "options.json"), None, known_options=known)


def test_missing_weights_can_come_from_a_state_dict_and_otherwise_fail_at_the_first_forward(
    elmo_options, elmo_weights, tmp_path
):
    trained = Elmo(elmo_options, elmo_weights, dropout=0.0)
    loaded = Elmo(elmo_options, str(tmp_path / "deleted.hdf5"), dropout=0.0)
    with pytest.raises(ConfigurationError, match="deleted.hdf5.*not found.*No loaded model state"):
        _vectors(loaded)
    loaded.load_state_dict(trained.state_dict())
    torch.testing.assert_close(_vectors(loaded), _vectors(trained))


def test_the_activation_cache_error_names_the_override_that_drops_it(elmo_options):
    with pytest.raises(ConfigurationError, match="activation_cache': null"):
        Elmo(elmo_options, None, requires_grad=True, activation_cache=ActivationCache())


def test_package_path_is_inside_the_package():
    assert os.path.isfile(package_path("pretrained/elmo_wikipedia_512x128/options.json"))
