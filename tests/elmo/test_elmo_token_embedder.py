import json
from typing import Dict, Tuple

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, Instance, Token, Vocabulary
from allennlp.data.fields import TextField
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, TokenIndexer
from allennlp.modules.elmo import batch_to_ids
from allennlp.modules.text_field_embedders import TextFieldEmbedder
from allennlp.modules.token_embedders import TokenEmbedder

from elmo_plugin.elmo import (
    ActivationCache,
    Elmo,
    ElmoBiLm,
    elmo_layer_weight_metrics,
    save_bilm,
)
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.compute_dtype import COMPUTE_DTYPES
from elmo_plugin.elmo.formats.naming.bilm_formats import OPTIONS_NAME, WEIGHTS_NAME
from elmo_plugin.allennlp.modules import ElmoTokenEmbedder


def embedder_params(elmo_options, elmo_weights, **extra):
    return Params(
        {
            "type": "elmo",
            "options_file": elmo_options,
            "weight_file": elmo_weights,
            "dropout": 0.0,
            **extra,
        }
    )


def test_built_from_config_inside_a_text_field_embedder(elmo_options, elmo_weights, sentences):
    params = Params(
        {"token_embedders": {"elmo": embedder_params(elmo_options, elmo_weights).as_dict()}}
    )
    text_field_embedder = TextFieldEmbedder.from_params(params)
    indexer: Dict[str, TokenIndexer] = {"elmo": ELMoTokenCharactersIndexer()}
    instances = [
        Instance({"tokens": TextField([Token(t) for t in s], indexer)}) for s in sentences[:3]
    ]
    batch = Batch(instances)
    batch.index_instances(Vocabulary())
    tokens = batch.as_tensor_dict()["tokens"]
    embedded = text_field_embedder(tokens)
    assert embedded.shape == (3, max(len(s) for s in sentences[:3]), 32)
    assert text_field_embedder.get_output_dim() == 32


def test_one_biLM_run_gives_every_output_representation(elmo_options, elmo_weights, sentences):
    embedder = TokenEmbedder.from_params(
        embedder_params(elmo_options, elmo_weights, num_output_representations=2)
    ).eval()
    assert isinstance(embedder, ElmoTokenEmbedder)
    calls = []
    bilm = embedder.elmo.bilm
    bilm.register_forward_hook(lambda *args: calls.append(1))
    ids = batch_to_ids(sentences[:2])
    representations = embedder.elmo(ids)["elmo_representations"]
    assert len(calls) == 1
    assert len(representations) == 2
    assert torch.equal(embedder(ids), representations[0])


def test_projection_changes_the_output_dim(elmo_options, elmo_weights, sentences):
    embedder = TokenEmbedder.from_params(
        embedder_params(elmo_options, elmo_weights, projection_dim=7)
    )
    assert embedder.get_output_dim() == 7
    assert embedder(batch_to_ids(sentences[:2])).shape[-1] == 7


def test_stateless_by_default_a_sentence_gets_the_same_vectors_in_any_batch(
    elmo_options, elmo_weights, sentences
):
    elmo = Elmo(elmo_options, elmo_weights, dropout=0.0).eval()
    target = sentences[5]
    with torch.no_grad():
        alone = elmo(batch_to_ids([target]))["elmo_representations"][0][0]
        elmo(batch_to_ids(sentences[10:20]))
        among_others = elmo(batch_to_ids(sentences[:8]))["elmo_representations"][0][5]
    torch.testing.assert_close(among_others[: len(target)], alone, atol=1e-6, rtol=0)


def test_requires_grad_controls_fine_tuning(elmo_options, elmo_weights):
    frozen = Elmo(elmo_options, elmo_weights)
    tuned = Elmo(elmo_options, elmo_weights, requires_grad=True)
    assert not any(p.requires_grad for p in frozen.bilm.parameters())
    assert all(p.requires_grad for p in tuned.bilm.parameters())
    assert all(p.requires_grad for p in frozen.scalar_mixes[0].parameters())


def test_keep_sentence_boundaries(elmo_options, elmo_weights, sentences):
    elmo = Elmo(elmo_options, elmo_weights, keep_sentence_boundaries=True).eval()
    output = elmo(batch_to_ids(sentences[:2]))
    assert output["elmo_representations"][0].shape[1] == max(len(s) for s in sentences[:2]) + 2
    assert output["mask"].sum().item() == len(sentences[0]) + len(sentences[1]) + 4


def test_activation_cache_gives_the_same_output_and_skips_the_biLM(
    elmo_options, elmo_weights, sentences, tmp_path
):
    plain = Elmo(elmo_options, elmo_weights, 2, dropout=0.0).eval()
    cache = ActivationCache(directory=str(tmp_path))
    cached = Elmo(elmo_options, elmo_weights, 2, dropout=0.0, activation_cache=cache).eval()
    calls = []
    cached.bilm.register_forward_hook(lambda module, args, output: calls.append(args[0].size(0)))
    ids = batch_to_ids(sentences[:6])
    with torch.no_grad():
        expected = plain(ids)
        first = cached(ids)
        second = cached(batch_to_ids(sentences[2:8]))  # four seen, two new
    assert calls == [6, 2]
    assert torch.equal(first["mask"], expected["mask"])
    for a, b in zip(first["elmo_representations"], expected["elmo_representations"]):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)
    torch.testing.assert_close(
        second["elmo_representations"][0][:4],
        expected["elmo_representations"][0][2:6, : second["mask"].size(1)],
        atol=1e-6,
        rtol=0,
    )
    # A new process with the same directory starts warm.
    fresh = Elmo(
        elmo_options,
        elmo_weights,
        2,
        dropout=0.0,
        activation_cache=ActivationCache(directory=str(tmp_path)),
    ).eval()
    fresh.bilm.register_forward_hook(lambda *args: calls.append("again"))
    with torch.no_grad():
        fresh(ids)
    assert "again" not in calls


def test_activation_cache_float16_is_close(elmo_options, elmo_weights, sentences):
    plain = Elmo(elmo_options, elmo_weights, dropout=0.0).eval()
    cached = Elmo(
        elmo_options, elmo_weights, dropout=0.0, activation_cache=ActivationCache(dtype="float16")
    ).eval()
    ids = batch_to_ids(sentences[:4])
    with torch.no_grad():
        cached(ids)
        torch.testing.assert_close(
            cached(ids)["elmo_representations"][0],
            plain(ids)["elmo_representations"][0],
            atol=5e-3,
            rtol=5e-3,
        )


def test_activation_cache_memory_bound_evicts_oldest(elmo_options, elmo_weights, sentences):
    cache = ActivationCache(max_memory_mb=0.05)
    elmo = Elmo(elmo_options, elmo_weights, activation_cache=cache).eval()
    with torch.no_grad():
        elmo(batch_to_ids(sentences[:20]))
    assert 0 < len(cache) < 20
    assert cache._memory_bytes <= 0.05 * 2**20


def test_activation_cache_refuses_a_trainable_or_stateful_biLM(elmo_options, elmo_weights):
    with pytest.raises(ConfigurationError, match="frozen, stateless"):
        Elmo(elmo_options, elmo_weights, requires_grad=True, activation_cache=ActivationCache())
    with pytest.raises(ConfigurationError, match="frozen, stateless"):
        Elmo(elmo_options, elmo_weights, stateful=True, activation_cache=ActivationCache())


def test_layer_weights_are_reported(elmo_options, elmo_weights):
    model = torch.nn.Module()
    model.embedder = ElmoTokenEmbedder(elmo_options, elmo_weights, num_output_representations=2)
    metrics = elmo_layer_weight_metrics(model)
    assert set(metrics) == {
        f"_elmo_mix{m}_{name}" for m in (0, 1) for name in ("token", "lstm_1", "lstm_2", "gamma")
    }
    assert metrics["_elmo_mix0_lstm_1"] == pytest.approx(1 / 3)
    assert metrics["_elmo_mix1_gamma"] == 1.0


def test_batch_of_one_and_empty_sentences(elmo_options, elmo_weights):
    elmo = Elmo(elmo_options, elmo_weights, dropout=0.0).eval()
    with torch.no_grad():
        one = elmo(batch_to_ids([["hello"]]))
        with_empty = elmo(batch_to_ids([["hello"], []]))
    assert one["elmo_representations"][0].shape == (1, 1, 32)
    assert with_empty["mask"].tolist() == [[True], [False]]
    assert torch.all(with_empty["elmo_representations"][0][1] == 0)


def test_zero_output_representations_is_refused(elmo_options, elmo_weights):
    with pytest.raises(ConfigurationError, match="at least 1"):
        Elmo(elmo_options, elmo_weights, num_output_representations=0)


def _other_bilm(elmo_options, directory, projection_dim=None) -> Tuple[str, str]:
    """The options and weights files of another (randomly initialised) biLM."""
    with open(elmo_options) as handle:
        options = json.load(handle)
    if projection_dim is not None:
        options["lstm"]["projection_dim"] = projection_dim
    torch.manual_seed(7)
    save_bilm(ElmoBiLm.from_options(options), str(directory))
    return str(directory / OPTIONS_NAME), str(directory / WEIGHTS_NAME)


def test_activation_cache_directory_is_never_read_by_another_biLM_of_the_same_shape(
    elmo_options, elmo_weights, sentences, tmp_path
):
    ids = batch_to_ids(sentences[:4])
    first = Elmo(
        elmo_options,
        elmo_weights,
        dropout=0.0,
        activation_cache=ActivationCache(directory=str(tmp_path)),
    ).eval()
    other_bilm = _other_bilm(elmo_options, tmp_path / "other")
    plain_other = Elmo(*other_bilm, dropout=0.0).eval()
    reused = Elmo(
        *other_bilm, dropout=0.0, activation_cache=ActivationCache(directory=str(tmp_path))
    ).eval()
    with torch.no_grad():
        first(ids)
        expected = plain_other(ids)["elmo_representations"][0]
        got = reused(ids)["elmo_representations"][0]
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)


def test_activation_cache_directory_reused_by_a_biLM_of_another_size(
    elmo_options, elmo_weights, sentences, tmp_path
):
    ids = batch_to_ids(sentences[:4])
    Elmo(
        elmo_options, elmo_weights, activation_cache=ActivationCache(directory=str(tmp_path))
    ).eval()(ids)
    bigger = _other_bilm(elmo_options, tmp_path / "bigger", projection_dim=32)
    expected = Elmo(*bigger, dropout=0.0).eval()(ids)["elmo_representations"][0]
    reused = Elmo(
        *bigger, dropout=0.0, activation_cache=ActivationCache(directory=str(tmp_path))
    ).eval()
    with torch.no_grad():
        torch.testing.assert_close(
            reused(ids)["elmo_representations"][0], expected, atol=1e-6, rtol=0
        )


def test_one_activation_cache_shared_by_two_biLMs_is_a_clear_error(
    elmo_options, elmo_weights, sentences, tmp_path
):
    cache = ActivationCache()
    ids = batch_to_ids(sentences[:2])
    Elmo(elmo_options, elmo_weights, activation_cache=cache).eval()(ids)
    other = Elmo(*_other_bilm(elmo_options, tmp_path / "other"), activation_cache=cache).eval()
    with pytest.raises(ConfigurationError, match="another biLM"):
        other(ids)


def test_activation_cache_entry_of_the_wrong_size_is_a_clear_error(
    elmo_options, elmo_weights, sentences
):
    cache = ActivationCache()
    elmo = Elmo(elmo_options, elmo_weights, activation_cache=cache).eval()
    ids = batch_to_ids(sentences[:1])
    elmo(ids)
    key = next(iter(cache._memory))
    cache._memory[key] = torch.zeros(3, len(sentences[0]) + 2, 256)
    with pytest.raises(ConfigurationError, match=r"activation cache.*\(3, \d+, 256\).*32"):
        elmo(ids)


def test_extra_leading_dimensions_as_allennlp(elmo_options, elmo_weights, sentences):
    elmo = Elmo(elmo_options, elmo_weights, 2, dropout=0.0).eval()
    ids = batch_to_ids(sentences[:6])
    with torch.no_grad():
        flat = elmo(ids)
        nested = elmo(ids.view(2, 3, *ids.shape[1:]))
    assert nested["mask"].shape == (2, 3, flat["mask"].size(1))
    assert torch.equal(nested["mask"].view(6, -1), flat["mask"])
    for a, b in zip(nested["elmo_representations"], flat["elmo_representations"]):
        assert a.shape == (2, 3, *b.shape[1:])
        torch.testing.assert_close(a.reshape(b.shape), b, atol=1e-6, rtol=0)


def test_extra_leading_dimensions_through_the_embedder(elmo_options, elmo_weights, sentences):
    embedder = TokenEmbedder.from_params(embedder_params(elmo_options, elmo_weights)).eval()
    ids = batch_to_ids(sentences[:4])
    with torch.no_grad():
        assert embedder(ids.view(2, 2, *ids.shape[1:])).shape == (2, 2, ids.size(1), 32)


def test_compute_dtype_from_config_runs_the_biLM_in_bfloat16(elmo_options, elmo_weights, sentences):
    ids = batch_to_ids(sentences[:4])
    outputs = {}
    for name in ("float32", "bfloat16"):
        embedder = TokenEmbedder.from_params(
            embedder_params(elmo_options, elmo_weights, compute_dtype=name)
        ).eval()
        assert isinstance(embedder, ElmoTokenEmbedder)
        assert embedder.elmo.bilm.compute_dtype == COMPUTE_DTYPES[name]
        with torch.no_grad():
            outputs[name] = embedder(ids)
    exact, reduced = outputs["float32"], outputs["bfloat16"]
    assert reduced.dtype == torch.float32
    assert 1e-4 < float((exact - reduced).abs().max() / exact.abs().max()) < 2e-2


def test_an_unknown_compute_dtype_is_a_configuration_error(elmo_options, elmo_weights):
    with pytest.raises(ConfigurationError, match="compute_dtype"):
        TokenEmbedder.from_params(embedder_params(elmo_options, elmo_weights, compute_dtype="half"))
