"""The activation cache behind the biLM: `CachedBiLm` is called as the biLM is, gives its
outputs, and runs it only on sentences the cache has not seen; `Elmo` runs it in front of its
biLM, whose parameter names (those trained archives hold) stay the same."""

import pytest
import torch
from allennlp.modules.elmo import batch_to_ids

from elmo_plugin.elmo import ActivationCache, Elmo, load_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.modules.cached_bilm import CachedBiLm


def test_called_as_the_bilm_it_gives_its_outputs_and_runs_it_on_new_sentences_only(
    elmo_options, elmo_weights, sentences
):
    bilm = load_bilm(elmo_options, elmo_weights).requires_grad_(False).eval()
    cached = CachedBiLm(bilm, ActivationCache())
    runs = []
    bilm.register_forward_hook(lambda module, args, output: runs.append(args[0].size(0)))
    with torch.no_grad():
        for batch in (sentences[:5], sentences[3:9]):
            ids = batch_to_ids(batch)
            expected, got = bilm(ids), cached(ids)
            assert torch.equal(got["mask"], expected["mask"])
            for a, b in zip(got["activations"], expected["activations"]):
                torch.testing.assert_close(a, b, atol=1e-6, rtol=0)
    assert runs == [5, 5, 6, 4]  # the plain biLM's run, then the cache's on new sentences


def test_it_needs_a_frozen_stateless_bilm(elmo_options, elmo_weights):
    with pytest.raises(ConfigurationError, match="frozen, stateless"):
        CachedBiLm(load_bilm(elmo_options, elmo_weights), ActivationCache())
    stateful = load_bilm(elmo_options, elmo_weights, stateful=True).requires_grad_(False)
    with pytest.raises(ConfigurationError, match="frozen, stateless"):
        CachedBiLm(stateful, ActivationCache())


def test_elmo_with_a_cache_has_the_parameter_names_of_elmo_without(elmo_options, elmo_weights):
    cached = Elmo(elmo_options, elmo_weights, 2, activation_cache=ActivationCache())
    plain = Elmo(elmo_options, elmo_weights, 2)
    assert list(cached.state_dict()) == list(plain.state_dict())
    assert {name.split(".")[0] for name in plain.state_dict()} == {"_bilm", "_scalar_mixes"}


def test_a_state_dict_loaded_into_elmo_is_another_bilm_for_the_cache(
    elmo_options, elmo_weights, sentences
):
    ids = batch_to_ids(sentences[:3])
    cached = Elmo(
        elmo_options, elmo_weights, dropout=0.0, activation_cache=ActivationCache()
    ).eval()
    other = Elmo(elmo_options, None, dropout=0.0).eval()
    with torch.no_grad():
        cached(ids)
        cached.load_state_dict(other.state_dict())
        with pytest.raises(ConfigurationError, match="another biLM"):
            cached(ids)
