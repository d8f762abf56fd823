"""The README's ELMo block in stock AllenNLP models: basic_classifier and allennlp-models'
crf_tagger train with it, and the layer-weight callback reports for them."""

import json
import os
import sys

import pytest
from allennlp.commands.train import train_model
from allennlp.common import Params

import elmo_plugin.allennlp  # noqa: F401  (registers the elmo embedder and the callback)
from tests.paths import TRAINING_CONFIGS

BLOCK = os.path.join(TRAINING_CONFIGS, "common", "elmo.libsonnet")


def _config(tmp_path, reader: str, model: str, elmo_options: str, elmo_weights: str) -> Params:
    path = tmp_path / "config.jsonnet"
    path.write_text(f"""
local elmo = (import "{BLOCK}")
  + {{ options_file: "{elmo_options}", weight_file: "{elmo_weights}" }};
{{
  dataset_reader: {reader},
  train_data_path: "{tmp_path}/train",
  model: {model},
  data_loader: {{ batch_size: 2 }},
  trainer: {{ optimizer: "adam", num_epochs: 1, callbacks: elmo.callbacks }},
}}""")
    return Params.from_file(str(path))


def test_basic_classifier_with_the_elmo_block_trains_and_logs_layer_weights(
    tmp_path, elmo_options, elmo_weights
):
    (tmp_path / "train").write_text(
        "".join(
            json.dumps({"text": text, "label": label}) + "\n"
            for text, label in [("a good film", "pos"), ("a bad film", "neg")]
        )
    )
    reader = """{ type: "text_classification_json", tokenizer: { type: "whitespace" },
                  token_indexers: elmo.indexers }"""
    model = """{ type: "basic_classifier",
                 text_field_embedder: { token_embedders: elmo.embedders(elmo.embedder()) },
                 seq2vec_encoder: { type: "boe", embedding_dim: 32 } }"""
    params = _config(tmp_path, reader, model, elmo_options, elmo_weights)
    train_model(params, str(tmp_path / "run"))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert {"training__elmo_mix0_token", "training__elmo_mix0_gamma"} <= set(metrics)


@pytest.fixture
def allennlp_models(monkeypatch):
    folder = os.path.join(sys.prefix, "allennlp-models")
    if not os.path.isdir(folder):
        pytest.skip(f"allennlp-models is not installed in {folder}")
    monkeypatch.syspath_prepend(folder)
    import allennlp_models.tagging  # noqa: F401


def test_crf_tagger_of_allennlp_models_with_the_elmo_block_trains(
    tmp_path, elmo_options, elmo_weights, allennlp_models
):
    (tmp_path / "train").write_text("John###B-PER lives###O here###O\nMary###B-PER ran###O\n")
    reader = """{ type: "sequence_tagging", token_indexers: { elmo: elmo.indexer } }"""
    model = """{ type: "crf_tagger", encoder: { type: "pass_through", input_dim: 32 },
                 text_field_embedder: { token_embedders: { elmo: elmo.embedder() } } }"""
    params = _config(tmp_path, reader, model, elmo_options, elmo_weights)
    train_model(params, str(tmp_path / "run"))
    assert "training__elmo_mix0_token" in json.loads(
        (tmp_path / "run" / "metrics.json").read_text()
    )
