"""The opt-in `compute_dtype: "bfloat16"`: what it costs in accuracy against float32 (the
bound it keeps: every layer within 2e-2 relative), that it really computes in bfloat16, that
float32 stays exact, and that the weights are cast once, not per step."""

from typing import Any, Dict, List, Tuple
from unittest import mock

import pytest
import torch
from allennlp.modules.elmo import batch_to_ids

from elmo_plugin.elmo import ElmoBiLm, ElmoBiLstm, load_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.compute_dtype import COMPUTE_DTYPES, parse_compute_dtype
from elmo_plugin.elmo.formats.bilm_tf import read_options
from tests.published_sizes import published_options

GOAL = 2e-2
BFLOAT16 = torch.bfloat16

# "small" at half the LSTM size and full CNN (quick for tests, larger than the fixture).
LARGER = published_options("small")
LARGER["char_cnn"]["n_highway"] = 2
LARGER["lstm"]["projection_dim"] = 256


def relative_differences(bilm: ElmoBiLm, sentences, batch_size: int = 32):
    """Per layer, the largest absolute difference between bfloat16 and float32 activations over
    every position, relative to the largest float32 activation of that layer."""
    bilm.eval()
    worst = [0.0] * bilm.num_layers
    with torch.no_grad():
        for start in range(0, len(sentences), batch_size):
            ids = batch_to_ids(sentences[start : start + batch_size])
            bilm.set_compute_dtype(torch.float32)
            exact = bilm(ids)["activations"]
            bilm.set_compute_dtype(torch.bfloat16)
            reduced = bilm(ids)["activations"]
            for i, (a, b) in enumerate(zip(exact, reduced)):
                assert b.dtype == torch.float32
                worst[i] = max(worst[i], float((a - b).abs().max() / a.abs().max()))
    return worst


def test_bfloat16_layers_of_the_fixture_bilm_are_within_the_goal(
    elmo_options, elmo_weights, sentences
):
    worst = relative_differences(load_bilm(elmo_options, elmo_weights), sentences)
    print("fixture biLM, max relative difference per layer:", worst)
    assert max(worst) < GOAL
    # And no layer is float32 in disguise (the token layer is the character encoder's alone).
    assert min(worst) > 1e-4


def test_bfloat16_layers_of_a_larger_random_bilm_on_real_sentences(corpus_sentences):
    torch.manual_seed(0)
    bilm = ElmoBiLm.from_options(LARGER)
    with torch.no_grad():
        for parameter in bilm.parameters():
            parameter.mul_(0.5)  # as the benchmarks: activations away from the clipping bounds
    worst = relative_differences(bilm, corpus_sentences(64))
    print("larger random biLM, max relative difference per layer:", worst)
    assert max(worst) < GOAL
    assert min(worst) > 1e-4


def test_float32_is_the_default_and_exact(elmo_options, elmo_weights, sentences):
    bilm = load_bilm(elmo_options, elmo_weights).eval()
    assert bilm.compute_dtype == torch.float32
    ids = batch_to_ids(sentences[:8])
    with torch.no_grad():
        before = bilm(ids)["activations"]
        bilm.set_compute_dtype(torch.bfloat16)
        bilm(ids)
        bilm.set_compute_dtype(torch.float32)
        after = bilm(ids)["activations"]
    for a, b in zip(before, after):
        assert torch.equal(a, b)


def test_one_compute_dtype_from_construction_to_every_module(elmo_options, elmo_weights):
    bilm = load_bilm(elmo_options, elmo_weights, compute_dtype=BFLOAT16)
    assert bilm.compute_dtype == bilm.character_encoder.compute_dtype == BFLOAT16
    assert all(layer.compute_dtype == BFLOAT16 for layer in bilm.lstm.bilstm_layers)
    bilm.set_compute_dtype(torch.float32)
    assert bilm.character_encoder.compute_dtype == torch.float32
    assert all(layer.compute_dtype == torch.float32 for layer in bilm.lstm.bilstm_layers)


def test_a_biLM_of_two_compute_dtypes_is_refused(elmo_options):
    bilm = ElmoBiLm.from_options(read_options(elmo_options), compute_dtype=BFLOAT16)
    with pytest.raises(ValueError, match="one compute dtype"):
        ElmoBiLm(bilm.character_encoder, ElmoBiLm.from_options(read_options(elmo_options)).lstm)


def test_unknown_names_fail_with_the_choices():
    assert set(COMPUTE_DTYPES) == {"float32", "bfloat16"}
    with pytest.raises(ConfigurationError, match="bfloat16.*float32.*'float16'"):
        parse_compute_dtype("float16")


def products(lstm, inputs, mask):
    """The dtypes of the matrix products one forward pass runs, and how many weight casts."""
    seen: List[Tuple[Any, ...]] = []
    original_bmm, original_to = torch.bmm, torch.Tensor.to

    def bmm(a, b, *args, **kwargs):
        seen.append(("bmm", a.dtype, b.dtype))
        return original_bmm(a, b, *args, **kwargs)

    weights = {id(p) for p in lstm.parameters()}

    def to(self, *args, **kwargs):
        if id(self) in weights:
            seen.append(("cast", self.shape))
        return original_to(self, *args, **kwargs)

    with mock.patch.object(torch, "bmm", bmm), mock.patch.object(torch.Tensor, "to", to):
        outputs, state = lstm(inputs, mask)
    return seen, outputs, state


@pytest.fixture
def native_bfloat16(monkeypatch):
    """The products as a CPU with native bfloat16 runs them (whatever this one has)."""
    from elmo_plugin.elmo.execution import compute_dtype

    monkeypatch.setattr(compute_dtype, "cpu_has_native_bfloat16", lambda: True)


def test_bfloat16_products_with_weights_cast_once_per_forward_pass(native_bfloat16):
    torch.manual_seed(0)
    lstm = ElmoBiLstm(8, 4, 16, num_layers=2, cell_clip=3, proj_clip=3, compute_dtype=BFLOAT16)
    inputs, mask = torch.randn(3, 12, 8), torch.ones(3, 12, dtype=torch.bool)
    seen, outputs, state = products(lstm, inputs, mask)
    bmms = [s for s in seen if s[0] == "bmm"]
    assert len(bmms) >= 2 * 2 * 12  # state and projection products of every step and layer
    assert all(a == b == torch.bfloat16 for _, a, b in bmms)
    # Three weights per layer, each cast once for all the steps.
    assert len([s for s in seen if s[0] == "cast"]) == 3 * 2
    assert all(o.dtype == torch.float32 for o in outputs)
    assert state.hidden.dtype == state.memory.dtype == torch.float32


def test_frozen_bfloat16_weights_are_kept_across_passes_until_they_change():
    torch.manual_seed(0)
    lstm = ElmoBiLstm(8, 4, 16, num_layers=1, compute_dtype=BFLOAT16).eval()
    inputs, mask = torch.randn(3, 5, 8), torch.ones(3, 5, dtype=torch.bool)
    with torch.no_grad():
        first, _ = lstm(inputs, mask)
        seen, again, _ = products(lstm, inputs, mask)
        assert not [s for s in seen if s[0] == "cast"]
        assert torch.equal(first[0], again[0])
        lstm.bilstm_layers[0].projection_weight.mul_(2.0)  # an in-place update, as an optimizer's
        seen, changed, _ = products(lstm, inputs, mask)
    assert len([s for s in seen if s[0] == "cast"]) == 3
    assert not torch.equal(first[0], changed[0])


def test_bfloat16_gradients_reach_the_float32_master_weights():
    torch.manual_seed(0)
    exact = ElmoBiLstm(8, 4, 16, num_layers=2, cell_clip=3, proj_clip=3)
    inputs, mask = torch.randn(3, 6, 8), torch.ones(3, 6, dtype=torch.bool)
    gradients: Dict[torch.dtype, List[torch.Tensor]] = {}
    for dtype in (torch.float32, torch.bfloat16):
        lstm = ElmoBiLstm(8, 4, 16, num_layers=2, cell_clip=3, proj_clip=3, compute_dtype=dtype)
        lstm.load_state_dict(exact.state_dict())
        outputs, _ = lstm(inputs, mask)
        (outputs[-1] ** 2).sum().backward()
        gradients[dtype] = []
        for parameter in lstm.parameters():
            assert parameter.grad is not None
            gradients[dtype].append(parameter.grad.clone())
        for parameter in lstm.parameters():
            assert parameter.dtype == torch.float32
    for expected, reduced in zip(gradients[torch.float32], gradients[torch.bfloat16]):
        assert reduced.dtype == torch.float32
        assert float((expected - reduced).abs().max() / expected.abs().max()) < 5e-2


def test_the_activation_cache_digest_tells_the_dtypes_apart(elmo_options, elmo_weights):
    bilm = load_bilm(elmo_options, elmo_weights)
    exact = bilm.digest()
    bilm.set_compute_dtype(BFLOAT16)
    assert bilm.digest() != exact
    assert bilm.digest() == load_bilm(elmo_options, elmo_weights, compute_dtype=BFLOAT16).digest()
    bilm.set_compute_dtype(torch.float32)
    assert bilm.digest() == exact


@pytest.mark.parametrize("native", [False, True])
def test_bfloat16_on_a_cpu_without_native_bfloat16_warns_once(monkeypatch, caplog, native):
    from elmo_plugin.elmo.execution import compute_dtype

    monkeypatch.setattr(compute_dtype, "_warned_about_emulated_bfloat16", False)
    monkeypatch.setattr(compute_dtype, "cpu_has_native_bfloat16", lambda: native)
    lstm = ElmoBiLstm(8, 4, 16, num_layers=1, compute_dtype=BFLOAT16).eval()
    inputs, mask = torch.randn(2, 5, 8), torch.ones(2, 5, dtype=torch.bool)
    with caplog.at_level("WARNING", logger=compute_dtype.__name__):
        lstm(inputs, mask)
        lstm.bilstm_layers[0].state_weight.data.add_(0.0)  # a changed weight is cast again
        lstm(inputs, mask)
    warnings = [r for r in caplog.records if "no native bfloat16" in r.getMessage()]
    assert len(warnings) == (0 if native else 1)


def test_float32_never_warns_about_bfloat16(monkeypatch, caplog):
    from elmo_plugin.elmo.execution import compute_dtype

    monkeypatch.setattr(compute_dtype, "_warned_about_emulated_bfloat16", False)
    monkeypatch.setattr(compute_dtype, "cpu_has_native_bfloat16", lambda: False)
    with caplog.at_level("WARNING", logger=compute_dtype.__name__):
        ElmoBiLstm(8, 4, 16, num_layers=1)(torch.randn(2, 5, 8), torch.ones(2, 5, dtype=torch.bool))
    assert not [r for r in caplog.records if "bfloat16" in r.getMessage()]


def test_without_native_bfloat16_the_rounded_weights_are_multiplied_in_float32(monkeypatch):
    from elmo_plugin.elmo.execution import compute_dtype

    monkeypatch.setattr(compute_dtype, "cpu_has_native_bfloat16", lambda: False)
    torch.manual_seed(0)
    lstm = ElmoBiLstm(8, 4, 16, num_layers=2, cell_clip=3, proj_clip=3, compute_dtype=BFLOAT16)
    inputs, mask = torch.randn(3, 12, 8), torch.ones(3, 12, dtype=torch.bool)
    seen, outputs, _ = products(lstm, inputs, mask)
    assert all(s[1] == s[2] == torch.float32 for s in seen if s[0] == "bmm")
    # The same as float32 arithmetic on the weights rounded to bfloat16.
    rounded = ElmoBiLstm(8, 4, 16, num_layers=2, cell_clip=3, proj_clip=3)
    rounded.load_state_dict({k: v.bfloat16().float() for k, v in lstm.state_dict().items()})
    with torch.no_grad():
        bias_unrounded = [layer.bias for layer in lstm.bilstm_layers]
        for layer, bias in zip(rounded.bilstm_layers, bias_unrounded):
            layer.bias.copy_(bias)  # biases stay float32 in the bfloat16 path
    expected, _ = rounded(inputs, mask)
    for a, b in zip(outputs, expected):
        assert torch.allclose(a, b, atol=1e-6)
