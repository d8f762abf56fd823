"""
Switching an SNLI config to a biLM of another output size takes an override of the `elmo`
module's files only: the model sizes its input encoder and `projection_feedforward` from the
embedders and the ELMo module.
"""
import json
import math
from pathlib import Path

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models import Model

import elmo_plugin  # noqa: F401
import elmo_plugin.tasks.snli  # noqa: F401

ROOT = Path(__file__).parents[3]
CONFIGS = ROOT / "training_configs" / "snli"
FIXTURES = ROOT / "fixtures" / "snli"
WORD_DIM, NUM_FILTERS, HIDDEN = 100, 64, 8
# Sizes shrunk for speed; none of them depends on the biLM.
SMALL = {
    # The fixture biLM (output size 32), whatever biLM the configs default to.
    "model.elmo.options_file": str(ROOT / "fixtures" / "elmo" / "options.json"),
    "model.elmo.weight_file": str(ROOT / "fixtures" / "elmo" / "lm_weights.hdf5"),
    "train_data_path": str(FIXTURES / "train.jsonl"),
    "validation_data_path": str(FIXTURES / "dev.jsonl"),
    "test_data_path": str(FIXTURES / "test.jsonl"),
    "trainer.num_epochs": 1,
    "model.encoder.hidden_size": HIDDEN,
    "model.projection_feedforward.hidden_dims": HIDDEN,
    "model.inference_encoder.input_size": HIDDEN,
    "model.inference_encoder.hidden_size": HIDDEN,
    "model.output_feedforward.input_dim": 8 * HIDDEN,
    "model.output_feedforward.hidden_dims": HIDDEN,
}


def test_elmo_config_trains_with_another_bilm_from_the_elmo_files_alone(
    tmp_path, other_size_bilm, other_bilm_output_dim
):
    options_file, weight_file = other_size_bilm
    # Switching the biLM: its files, nothing else.
    overrides = dict(SMALL, **{"model.elmo.options_file": options_file, "model.elmo.weight_file": weight_file})
    run = tmp_path / "run"
    model = train_model_from_file(
        str(CONFIGS / "snli_elmo_input_output.jsonnet"), str(run), overrides=json.dumps(overrides)
    )
    metrics = json.loads((run / "metrics.json").read_text())
    assert math.isfinite(metrics["training_loss"]) and math.isfinite(metrics["test_loss"])
    assert 0.0 <= metrics["test_accuracy"] <= 1.0
    assert other_bilm_output_dim != 32  # the fixture biLM's, which SMALL names
    assert model._encoder.get_input_dim() == WORD_DIM + NUM_FILTERS + other_bilm_output_dim
    assert model._projection_feedforward.get_input_dim() == 4 * (2 * HIDDEN + other_bilm_output_dim)


@pytest.mark.parametrize(
    "module, size_key, right",
    [
        ("encoder", "input_size", WORD_DIM + NUM_FILTERS + 32),
        ("projection_feedforward", "input_dim", 4 * (2 * HIDDEN + 32)),
    ],
)
def test_sizes_given_in_the_config_must_match_the_elmo_module(module, size_key, right):
    params = Params.from_file(str(CONFIGS / "snli_elmo_input_output.jsonnet"), json.dumps(SMALL))
    model_params = params.pop("model").as_dict()
    vocab = Vocabulary(tokens_to_add={"labels": ["entailment", "neutral", "contradiction"]})
    # The right size is accepted (the fixture biLM's output size is 32) ...
    model_params[module][size_key] = right
    model = Model.from_params(vocab=vocab, params=Params(json.loads(json.dumps(model_params))))
    assert getattr(model, f"_{module}").get_input_dim() == right
    # ... a wrong one is a ConfigurationError naming both sizes.
    model_params[module][size_key] = right + 1
    with pytest.raises(ConfigurationError, match=f"{module} input dim is {right + 1} but .* is {right}"):
        Model.from_params(vocab=vocab, params=Params(model_params))
