"""
Switching `ner_elmo.jsonnet` to a biLM of another output size takes an override of the
ELMo files only: the model sizes the encoder input from the embedders.
"""
import json
import math
from pathlib import Path

from allennlp.commands.train import train_model_from_file

import elmo_plugin.tasks.ner  # noqa: F401

ROOT = Path(__file__).parents[3]
ELMO = "model.text_field_embedder.token_embedders.elmo"
WORD_DIM, NUM_FILTERS = 8, 8


def test_elmo_config_trains_with_another_bilm_from_the_elmo_files_alone(
    tmp_path, monkeypatch, other_size_bilm, other_bilm_output_dim
):
    monkeypatch.chdir(ROOT)
    options_file, weight_file = other_size_bilm
    overrides = {
        "train_data_path": "fixtures/ner/train.txt",
        "validation_data_path": "fixtures/ner/dev.txt",
        "test_data_path": "fixtures/ner/test.txt",
        "trainer.num_epochs": 1,
        "data_loader.batch_sampler.batch_size": 8,
        "model.text_field_embedder.token_embedders.tokens.embedding_dim": WORD_DIM,
        "model.text_field_embedder.token_embedders.token_characters.encoder.num_filters": NUM_FILTERS,
        "model.encoder.hidden_size": 8,
        # Switching the biLM: its files, nothing else.
        f"{ELMO}.options_file": options_file,
        f"{ELMO}.weight_file": weight_file,
    }
    run = tmp_path / "run"
    model = train_model_from_file(
        str(ROOT / "training_configs/ner/ner_elmo.jsonnet"), str(run), overrides=json.dumps(overrides)
    )
    metrics = json.loads((run / "metrics.json").read_text())
    assert math.isfinite(metrics["training_loss"])
    assert 0.0 <= metrics["test_f1-measure-overall"] <= 1.0
    assert other_bilm_output_dim != 32  # the fixture biLM's, which the config was written for
    assert model.encoder.get_input_dim() == WORD_DIM + NUM_FILTERS + other_bilm_output_dim
