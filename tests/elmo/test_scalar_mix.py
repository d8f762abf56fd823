import pytest
import torch
from allennlp.common import Params
from allennlp.modules.scalar_mix import ScalarMix as AllenNlpScalarMix
from allennlp.nn.regularizers import RegularizerApplicator

from elmo_plugin.elmo import ScalarMix
from elmo_plugin.elmo.errors import ConfigurationError


def layers(batch=3, length=5, dim=4, count=3):
    torch.manual_seed(0)
    return [torch.randn(batch, length, dim) for _ in range(count)]


def test_weights_are_a_softmax_and_gamma_scales():
    mix = ScalarMix(3, initial_scalar_parameters=[0.0, 1.0, 2.0])
    weights = mix.normalized_weights()
    torch.testing.assert_close(weights, torch.softmax(torch.tensor([0.0, 1.0, 2.0]), 0))
    tensors = layers()
    with torch.no_grad():
        mix.gamma.fill_(2.0)
    expected = 2.0 * sum(w * t for w, t in zip(weights, tensors))
    torch.testing.assert_close(mix(tensors), expected)


@pytest.mark.parametrize("do_layer_norm", [False, True])
def test_matches_allennlp(do_layer_norm):
    tensors = layers()
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]]).bool()
    ours = ScalarMix(3, do_layer_norm=do_layer_norm, initial_scalar_parameters=[0.1, 0.2, -0.3])
    theirs = AllenNlpScalarMix(
        3, do_layer_norm=do_layer_norm, initial_scalar_parameters=[0.1, 0.2, -0.3]
    )
    torch.testing.assert_close(ours(tensors, mask), theirs(tensors, mask))


def test_fixed_parameters_are_not_trained():
    mix = ScalarMix(3, initial_scalar_parameters=[-9e10, -9e10, 1.0], trainable=False)
    assert not mix.scalar_parameters.requires_grad and not mix.gamma.requires_grad
    tensors = layers()
    torch.testing.assert_close(mix(tensors), tensors[2])


def test_wrong_number_of_parameters():
    with pytest.raises(ConfigurationError, match="3 values but the biLM has 2 layers"):
        ScalarMix(2, initial_scalar_parameters=[1.0, 2.0, 3.0])


def test_dropout_applies_only_in_training():
    mix = ScalarMix(3, dropout=0.5)
    tensors = [torch.ones(2, 50, 8)] * 3
    assert (mix(tensors) == 0).any()
    mix.eval()
    assert not (mix(tensors) == 0).any()


def test_config_regularizer_is_lambda_times_squared_weights():
    """The paper's lambda * ||w||^2, set from config through AllenNLP's regularizer."""
    model = torch.nn.Module()
    mix = ScalarMix(3, initial_scalar_parameters=[1.0, -2.0, 0.5])
    model.scalar_mixes = torch.nn.ModuleList([mix])
    regularizer = RegularizerApplicator.from_params(
        Params({"regexes": [[".*scalar_mixes.*scalar_parameters", {"type": "l2", "alpha": 0.01}]]})
    )
    penalty = regularizer(model)
    torch.testing.assert_close(penalty, torch.tensor(0.01 * (1.0 + 4.0 + 0.25)))
    penalty.backward()
    # The gradient pulls the weights towards zero, i.e. the softmax towards the average.
    assert mix.scalar_parameters.grad is not None
    assert torch.all(torch.sign(mix.scalar_parameters.grad) == torch.tensor([1.0, -1.0, 1.0]))


def test_wrong_number_of_layers_is_a_configuration_error_as_in_allennlp():
    with pytest.raises(ConfigurationError, match="3 layers, got 2"):
        ScalarMix(3)([torch.zeros(1, 2, 4)] * 2)
