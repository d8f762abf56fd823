"""Our highway layers are AllenNLP's `Highway` in float32: the same initialisation, parameter
names and numbers, so archives and bilm-tf weight files load into them unchanged."""

import torch
from allennlp.modules.highway import Highway as AllenNlpHighway

from elmo_plugin.elmo.bilm.characters.highway import Highway


def both(input_dim: int = 6, num_layers: int = 3):
    torch.manual_seed(0)
    theirs = AllenNlpHighway(input_dim, num_layers)
    torch.manual_seed(0)
    return Highway(input_dim, num_layers), theirs


def test_the_same_initialisation_and_state_dict_keys_as_allennlps():
    ours, theirs = both()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert list(ours.state_dict())[:2] == ["_layers.0.weight", "_layers.0.bias"]
    for name, tensor in theirs.state_dict().items():
        assert torch.equal(ours.state_dict()[name], tensor)


def test_float32_outputs_and_gradients_are_allennlps_bit_for_bit():
    ours, theirs = both()
    inputs = torch.randn(4, 5, 6) * 3
    ours_out, theirs_out = ours(inputs), theirs(inputs)
    assert torch.equal(ours_out, theirs_out)
    ours_out.pow(2).sum().backward()
    theirs_out.pow(2).sum().backward()
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert torch.equal(a.grad, b.grad)


def test_reduced_weights_run_the_products_in_their_dtype_with_float32_gating():
    ours, _ = both()
    inputs = torch.randn(4, 6)
    weights = [layer.weight.to(torch.bfloat16) for layer in ours.layers]
    with torch.no_grad():
        reduced, exact = ours(inputs, weights), ours(inputs)
    assert reduced.dtype == torch.float32
    assert 0 < float((exact - reduced).abs().max() / exact.abs().max()) < 2e-2
