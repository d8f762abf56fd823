"""
Switching `srl_elmo.jsonnet` to a biLM of another output size takes an override of the
ELMo files only: the model sizes the encoder input from the embedders and the predicate
embedding.
"""
import json
import math
from pathlib import Path

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.util import import_module_and_submodules
from allennlp.data import Vocabulary
from allennlp.models import Model

ROOT = Path(__file__).resolve().parents[3]
TRAIN = ROOT / "fixtures" / "srl" / "up_english_ewt_train_slice.conllu"
ELMO = "model.text_field_embedder.token_embedders.elmo"
WORD_DIM, NUM_FILTERS, PREDICATE_DIM = 10, 8, 4
SMALL = {
    "train_data_path": str(TRAIN),
    "validation_data_path": str(TRAIN),
    "test_data_path": str(TRAIN),
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": WORD_DIM,
    "model.text_field_embedder.token_embedders.token_characters.encoder.num_filters": NUM_FILTERS,
    "model.predicate_embedding_dim": PREDICATE_DIM,
    "model.encoder.hidden_size": 8,
    "model.encoder.num_layers": 2,
    "trainer.num_epochs": 1,
    "data_loader.batch_sampler.batch_size": 16,
}


@pytest.fixture(autouse=True)
def one_thread():
    # Tiny models on a shared machine: threads only contend.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_elmo_config_trains_with_another_bilm_from_the_elmo_files_alone(
    tmp_path, monkeypatch, other_size_bilm, other_bilm_output_dim
):
    import_module_and_submodules("elmo_plugin")
    monkeypatch.chdir(ROOT)
    options_file, weight_file = other_size_bilm
    # Switching the biLM: its files, nothing else.
    overrides = dict(SMALL, **{f"{ELMO}.options_file": options_file, f"{ELMO}.weight_file": weight_file})
    run = tmp_path / "run"
    model = train_model_from_file(
        str(ROOT / "training_configs/srl/srl_elmo.jsonnet"), str(run), overrides=json.dumps(overrides)
    )
    metrics = json.loads((run / "metrics.json").read_text())
    assert math.isfinite(metrics["training_loss"]) and metrics["training_loss"] > 0
    assert 0.0 <= metrics["test_f1-measure-overall"] <= 1.0
    assert other_bilm_output_dim != 32  # the fixture biLM's, which the config was written for
    assert model._encoder.get_input_dim() == WORD_DIM + NUM_FILTERS + other_bilm_output_dim + PREDICATE_DIM


def test_an_encoder_input_size_given_in_the_config_must_match(monkeypatch):
    import_module_and_submodules("elmo_plugin")
    monkeypatch.chdir(ROOT)
    params = Params.from_file(str(ROOT / "training_configs/srl/srl_baseline.jsonnet"), json.dumps(SMALL))
    model_params = params.pop("model").as_dict()
    vocab = Vocabulary(tokens_to_add={"span_labels": ["O", "B-V", "B-ARG0", "I-ARG0"]})
    right = WORD_DIM + NUM_FILTERS + PREDICATE_DIM
    model_params["encoder"]["input_size"] = right
    model = Model.from_params(vocab=vocab, params=Params(json.loads(json.dumps(model_params))))
    assert model._encoder.get_input_dim() == right
    model_params["encoder"]["input_size"] = right + 1
    with pytest.raises(ConfigurationError, match=f"encoder input dim is {right + 1} but .* is {right}"):
        Model.from_params(vocab=vocab, params=Params(model_params))
