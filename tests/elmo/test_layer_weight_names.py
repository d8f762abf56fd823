import pytest
import torch

from elmo_plugin.elmo import (
    Elmo,
    LayerWeightMetric,
    bilm_layer_names,
    elmo_layer_weight_metrics,
    layer_weight_metric_name,
    parse_layer_weight_metric_name,
)


@pytest.mark.parametrize(
    "elmo, mix, layer, name",
    [
        (None, 0, "token", "_elmo_mix0_token"),
        (None, 1, "lstm_2", "_elmo_mix1_lstm_2"),
        (3, 12, "gamma", "_elmo3_mix12_gamma"),
    ],
)
def test_a_made_name_parses_back(elmo, mix, layer, name):
    assert layer_weight_metric_name(elmo, mix, layer) == name
    assert parse_layer_weight_metric_name(name) == LayerWeightMetric(None, elmo, mix, layer)


@pytest.mark.parametrize("phase", ["training", "validation", "best_validation", "test"])
def test_metrics_file_keys_parse_with_their_phase(phase):
    key = f"{phase}_{layer_weight_metric_name(1, 0, 'lstm_1')}"
    assert parse_layer_weight_metric_name(key) == LayerWeightMetric(phase, 1, 0, "lstm_1")


@pytest.mark.parametrize(
    "name",
    [
        "training_loss",
        "_elmo_gamma",
        "elmo_mix0_token",
        "peak_elmo_mix0_token",
        "training_elmo_mix0_token",
        "other__elmo_mix0_token",
        "_elmo_mixA_token",
    ],
)
def test_other_metrics_are_not_layer_weights(name):
    assert parse_layer_weight_metric_name(name) is None


def test_every_metric_a_model_logs_parses_back_to_its_mix_and_layer(elmo_options, elmo_weights):
    model = torch.nn.Module()
    model.first = Elmo(elmo_options, elmo_weights, 2)
    model.second = Elmo(elmo_options, elmo_weights, 1)
    metrics = elmo_layer_weight_metrics(model)
    parsed = {parse_layer_weight_metric_name(name) for name in metrics}
    layers = model.first.bilm.layer_names() + ["gamma"]
    expected = {(0, 0), (0, 1), (1, 0)}
    assert parsed == {LayerWeightMetric(None, e, m, layer) for e, m in expected for layer in layers}


def test_the_biLM_names_its_layers_as_the_metrics_do(elmo_options, elmo_weights):
    bilm = Elmo(elmo_options, elmo_weights).bilm
    assert bilm.layer_names() == bilm_layer_names(2) == ["token", "lstm_1", "lstm_2"]
