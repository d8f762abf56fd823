"""
Switching a SQuAD config to a biLM of another output size takes an override of the `elmo`
module's files only: the model sizes `phrase_layer` and `modeling_layer` from the embedders
and the ELMo module.
"""
import json
import math
from pathlib import Path

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models import Model

import elmo_plugin.tasks.squad  # noqa: F401

ROOT = Path(__file__).parents[3]
CONFIGS = ROOT / "training_configs" / "squad"
FIXTURE = str(ROOT / "fixtures" / "squad" / "tiny_train.json")
EMBEDDERS = "model.text_field_embedder.token_embedders"
WORD_DIM, NUM_FILTERS, HIDDEN = 8, 8, 6
# Sizes shrunk for speed; none of them depends on the biLM.
SMALL = {
    # The fixture biLM (output size 32), whatever biLM the configs default to.
    "model.elmo.options_file": str(ROOT / "fixtures" / "elmo" / "options.json"),
    "model.elmo.weight_file": str(ROOT / "fixtures" / "elmo" / "lm_weights.hdf5"),
    "train_data_path": FIXTURE,
    "test_data_path": FIXTURE,
    f"{EMBEDDERS}.tokens.embedding_dim": WORD_DIM,
    f"{EMBEDDERS}.token_characters.embedding.embedding_dim": 4,
    f"{EMBEDDERS}.token_characters.encoder.embedding_dim": 4,
    f"{EMBEDDERS}.token_characters.encoder.num_filters": NUM_FILTERS,
    "model.phrase_layer.hidden_size": HIDDEN,
    "model.modeling_layer.hidden_size": HIDDEN,
    "model.span_end_encoder.hidden_size": HIDDEN,
    "data_loader.batch_sampler.batch_size": 4,
    "trainer.num_epochs": 1,
}


@pytest.fixture(autouse=True)
def one_torch_thread():
    # On a busy 2-core machine two intra-op threads spin against each other.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_elmo_config_trains_with_another_bilm_from_the_elmo_files_alone(
    tmp_path, other_size_bilm, other_bilm_output_dim
):
    options_file, weight_file = other_size_bilm
    # Switching the biLM: its files, nothing else.
    overrides = dict(SMALL, **{"model.elmo.options_file": options_file, "model.elmo.weight_file": weight_file})
    run = tmp_path / "run"
    model = train_model_from_file(
        str(CONFIGS / "squad_elmo_input_output.jsonnet"), str(run), overrides=json.dumps(overrides)
    )
    metrics = json.loads((run / "metrics.json").read_text())
    assert math.isfinite(metrics["training_loss"]) and metrics["training_loss"] > 0
    assert 0.0 <= metrics["test_f1"] <= 1.0
    assert other_bilm_output_dim != 32  # the fixture biLM's, which SMALL names
    assert model._phrase_layer.get_input_dim() == WORD_DIM + NUM_FILTERS + other_bilm_output_dim
    assert model._modeling_layer.get_input_dim() == 4 * 2 * HIDDEN + other_bilm_output_dim


@pytest.mark.parametrize(
    "module, right",
    [("phrase_layer", WORD_DIM + NUM_FILTERS + 32), ("modeling_layer", 4 * 2 * HIDDEN + 32)],
)
def test_an_input_size_given_in_the_config_must_match_the_elmo_module(module, right):
    params = Params.from_file(str(CONFIGS / "squad_elmo_input_output.jsonnet"), json.dumps(SMALL))
    model_params = params.pop("model").as_dict()
    vocab = Vocabulary()
    # The right size is accepted (the fixture biLM's output size is 32) ...
    model_params[module]["input_size"] = right
    model = Model.from_params(vocab=vocab, params=Params(json.loads(json.dumps(model_params))))
    assert getattr(model, f"_{module}").get_input_dim() == right
    # ... a wrong one is a ConfigurationError naming both sizes.
    model_params[module]["input_size"] = right + 1
    with pytest.raises(ConfigurationError, match=f"{module} input dim is {right + 1} but .* is {right}"):
        Model.from_params(vocab=vocab, params=Params(model_params))
