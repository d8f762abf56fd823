import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image
from allennlp.commands import main

import elmo_plugin.allennlp.tasks.ner  # noqa: F401
from tests.paths import PROJECT_ROOT, TRAINING_CONFIGS
from tests.tasks.ner.ner_small_overrides import SMALL
from tests.tasks.training_helpers import train_config


def train(config: str, serialization_dir: Path) -> dict:
    """Small sizes; the model sizes its encoder from the embedders."""
    _, metrics = train_config(TRAINING_CONFIGS / "ner" / config, serialization_dir, SMALL)
    return metrics


def predict(archive: Path, tmp_path: Path, monkeypatch) -> list:
    inputs = tmp_path / "input.jsonl"
    inputs.write_text(
        json.dumps({"sentence": "Peter Blackburn of the European Commission visited Brussels."})
        + "\n"
        + json.dumps({"tokens": ["EU", "rejects", "German", "call"]})
        + "\n"
    )
    output = tmp_path / "predictions.jsonl"
    argv = ["allennlp", "predict", str(archive), str(inputs), "--output-file", str(output)]
    monkeypatch.setattr(
        sys, "argv", argv + ["--include-package", "elmo_plugin.allennlp.tasks.ner", "--silent"]
    )
    main()
    return [json.loads(line) for line in output.read_text().splitlines()]


def check_metrics(metrics: dict) -> None:
    assert math.isfinite(metrics["training_loss"])
    for key in ("best_validation_f1-measure-overall", "test_f1-measure-overall"):
        assert 0.0 <= metrics[key] <= 1.0


def check_predictions(predictions: list) -> None:
    first, second = predictions
    assert first["tokens"] == [
        "Peter",
        "Blackburn",
        "of",
        "the",
        "European",
        "Commission",
        "visited",
        "Brussels",
        ".",
    ]
    assert second["tokens"] == ["EU", "rejects", "German", "call"]
    for prediction in predictions:
        assert sorted(prediction) == ["spans", "tags", "tokens"]
        assert len(prediction["tags"]) == len(prediction["tokens"])
        for span in prediction["spans"]:
            assert span["text"] == " ".join(prediction["tokens"][span["start"] : span["end"] + 1])


def test_baseline_config_trains_evaluates_and_predicts(tmp_path, monkeypatch):
    metrics = train("ner_baseline.jsonnet", tmp_path / "run")
    check_metrics(metrics)
    assert not any("_elmo" in key for key in metrics)
    check_predictions(predict(tmp_path / "run" / "model.tar.gz", tmp_path, monkeypatch))


def test_elmo_config_trains_with_layer_weights_in_the_metrics(tmp_path, monkeypatch):
    run = tmp_path / "run"
    metrics = train("ner_elmo.jsonnet", run)  # the config's default biLM, the shipped one
    check_metrics(metrics)
    epoch = json.loads((run / "metrics_epoch_0.json").read_text())
    weights = [epoch[f"training__elmo_mix0_{name}"] for name in ("token", "lstm_1", "lstm_2")]
    assert sum(weights) == pytest.approx(1.0)
    # One epoch of training has moved the weights off the initial average.
    assert max(weights) - min(weights) > 1e-6
    assert "training_reg_loss" in epoch
    check_predictions(predict(run / "model.tar.gz", tmp_path, monkeypatch))

    plot = tmp_path / "weights.png"
    script = PROJECT_ROOT / "experiments/plot_layer_weights.py"
    inputs = [f"ner={run}", f"ner_archive={run / 'model.tar.gz'}"]
    table = subprocess.run(
        [sys.executable, str(script), *inputs, "-o", str(plot)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    # The last epoch was the best, so the archive holds the weights its metrics logged.
    from_metrics, from_archive = table[2].split("|")[2:-1], table[3].split("|")[2:-1]
    assert from_metrics == from_archive and len(from_metrics) == 4
    assert Image.open(plot).size[0] > 100


def test_the_character_embedding_is_sized_by_the_characters_not_the_words():
    """training_configs/common/embeddings.libsonnet: with Embedding's default
    namespace the table had a row per word, and a sample with fewer words than characters
    crashed."""
    from allennlp.common import Params
    from allennlp.data import Vocabulary
    from allennlp.models import Model
    from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
    from allennlp.modules.token_embedders import Embedding, TokenCharactersEncoder

    from elmo_plugin.allennlp.tasks.ner.models import BiLstmCrfTagger

    params = Params.from_file(str(TRAINING_CONFIGS / "ner/ner_baseline.jsonnet"))
    vocab = Vocabulary(
        tokens_to_add={
            "tokens": ["a", "b"],
            "token_characters": list("abcdefghijklmnopqrstuvwxyz"),
            "labels": ["O", "B-PER", "I-PER"],
        }
    )
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    assert isinstance(model, BiLstmCrfTagger)
    embedder = model.text_field_embedder
    assert isinstance(embedder, BasicTextFieldEmbedder)
    encoder = embedder._token_embedders["token_characters"]
    assert isinstance(encoder, TokenCharactersEncoder)
    characters = encoder._embedding._module
    assert isinstance(characters, Embedding)
    assert characters.weight.size(0) == vocab.get_vocab_size("token_characters") == 28
