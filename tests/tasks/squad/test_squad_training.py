"""Each SQuAD config trained for one epoch on the fixture (one also with an ELMoForManyLangs
model chosen by the config alone), then `allennlp evaluate` and `allennlp predict` on an
archive, as a user would run them."""

import json
import math
import sys
from pathlib import Path
from unittest import mock

import pytest
from allennlp.commands import main

import elmo_plugin.allennlp.tasks.squad  # noqa: F401
from elmo_plugin.elmo.formats.efml import EfmlBiLm
from tests.paths import TRAINING_CONFIGS
from tests.tasks.squad.squad_small_overrides import FIXTURE, SMALL
from tests.tasks.training_helpers import EFML_VARIANT, task_config, train_config

CONFIGS = ["squad_baseline", "squad_elmo", "squad_elmo_output", "squad_elmo_input_output"]


def train(config: str, serialization_dir: Path, **extra_overrides):
    config_path = task_config(TRAINING_CONFIGS / "squad", config, serialization_dir.parent)
    return train_config(config_path, serialization_dir, {**SMALL, **extra_overrides})


def run_allennlp(*args: str) -> None:
    argv = ["allennlp", *args, "--include-package", "elmo_plugin.allennlp.tasks.squad"]
    with mock.patch.object(sys, "argv", argv):
        main()


@pytest.mark.parametrize("config", CONFIGS + ["squad_elmo_input_output" + EFML_VARIANT])
def test_config_trains_one_epoch_and_scores_the_test_split(config, tmp_path):
    model, metrics = train(config, tmp_path / config)
    assert math.isfinite(metrics["training_loss"]) and metrics["training_loss"] > 0
    for key in ("test_em", "test_f1", "test_start_acc", "test_end_acc", "test_span_acc"):
        assert 0.0 <= metrics[key] <= 1.0, key
    assert metrics["test_f1"] >= metrics["test_em"]
    layer_weights = {key for key in metrics if key.startswith("training__elmo_mix")}
    if config == "squad_baseline":
        assert model._elmo is None and not layer_weights
    else:
        mixes = 2 if config.startswith("squad_elmo_input_output") else 1
        assert len(model._elmo.scalar_mixes) == mixes
        assert isinstance(model._elmo.bilm, EfmlBiLm) == config.endswith(EFML_VARIANT)
        # 3 biLM layers (character CNN + 2 LSTMs) and gamma, per mix.
        assert len(layer_weights) == 4 * mixes
    assert (tmp_path / config / "model.tar.gz").exists()


def test_a_validation_set_added_by_override_selects_on_f1(tmp_path):
    _, metrics = train("squad_baseline", tmp_path / "validated", validation_data_path=FIXTURE)
    assert 0.0 <= metrics["best_validation_f1"] <= 1.0
    assert metrics["best_epoch"] == 0


def test_evaluate_and_predict_with_the_archive(tmp_path):
    serialization_dir = tmp_path / "input_output"
    train("squad_elmo_input_output", serialization_dir)
    archive = str(serialization_dir / "model.tar.gz")

    evaluation = tmp_path / "evaluation.json"
    run_allennlp("evaluate", archive, FIXTURE, "--output-file", str(evaluation))
    scores = json.loads(evaluation.read_text())
    assert 0.0 <= scores["em"] <= scores["f1"] <= 1.0
    assert math.isfinite(scores["loss"])

    passage = "Super Bowl 50 was played at Levi's Stadium in Santa Clara, California."
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        json.dumps({"passage": passage, "question": "Where was Super Bowl 50 played?", "id": "a"})
        + "\n"
        + json.dumps({"passage": passage, "question": "Which Super Bowl?", "id": "b"})
        + "\n"
    )
    predictions = tmp_path / "predictions.jsonl"
    run_allennlp("predict", archive, str(questions), "--output-file", str(predictions), "--silent")
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert [line["question_id"] for line in lines] == ["a", "b"]
    for line in lines:
        assert set(line) == {"best_span_str", "best_span", "best_span_chars", "question_id"}
        start, end = line["best_span_chars"]
        assert line["best_span_str"] == passage[start:end] and line["best_span_str"]
        first, last = line["best_span"]
        assert 0 <= first <= last < first + 30
