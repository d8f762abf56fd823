"""
Every SNLI config trains for one epoch on the fixtures (through `train_model_from_file`, what
`allennlp train` runs), with the sizes shrunk; `allennlp evaluate` and `allennlp predict` then
run on an archive.
"""
import json
import math
import sys
from pathlib import Path
from unittest import mock

import _jsonnet
import pytest
from allennlp.commands import main
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

import elmo_plugin  # noqa: F401
import elmo_plugin.tasks.snli  # noqa: F401
from tests.tasks.snli.snli_small_overrides import FIXTURES, SMALL

CONFIGS = Path(__file__).parents[3] / "elmo_plugin" / "training_configs" / "snli"
LABELS = {"entailment", "neutral", "contradiction"}
ELMO_PLACES = {
    "snli_baseline": (False, False),
    "snli_elmo_input": (True, False),
    "snli_elmo_output": (False, True),
    "snli_elmo_input_output": (True, True),
}


def shrinking_overrides(config_path: Path) -> dict:
    # The model sets the input sizes of its encoders and feedforwards itself.
    model = json.loads(_jsonnet.evaluate_file(str(config_path)))["model"]
    assert "input_size" not in model["encoder"] and "input_dim" not in model["projection_feedforward"]
    assert "input_size" not in model["inference_encoder"]
    assert "input_dim" not in model["output_feedforward"]
    return SMALL


@pytest.mark.parametrize("name", [name for name, places in ELMO_PLACES.items() if any(places)])
def test_elmo_at_the_input_is_dropped_by_the_model_not_again_by_elmo(name):
    # esim_nli drops its encoder's input (ELMo at the input included) with `dropout`; ELMo's own
    # dropout on top of it cost 2.5 points of SNLI accuracy at every seed.
    model = json.loads(_jsonnet.evaluate_file(str(CONFIGS / f"{name}.jsonnet")))["model"]
    assert model["elmo"]["dropout"] == 0.0 and model["dropout"] == 0.5


@pytest.fixture(scope="module")
def train(tmp_path_factory):
    """Trains a config once per module; returns its serialization directory."""
    trained = {}

    def _train(name: str) -> Path:
        if name not in trained:
            config = CONFIGS / f"{name}.jsonnet"
            serialization_dir = tmp_path_factory.mktemp(name)
            train_model_from_file(
                str(config),
                str(serialization_dir),
                overrides=json.dumps(shrinking_overrides(config)),
                force=True,
            )
            trained[name] = serialization_dir
        return trained[name]

    return _train


def run_allennlp(*args: str) -> None:
    with mock.patch.object(sys, "argv", ["allennlp", *args, "--include-package", "elmo_plugin"]):
        main()


@pytest.mark.parametrize("name", sorted(ELMO_PLACES))
def test_config_trains_one_epoch_and_evaluates_on_test(train, name):
    serialization_dir = train(name)
    metrics = json.loads((serialization_dir / "metrics.json").read_text())
    assert metrics["epoch"] == 0
    assert math.isfinite(metrics["training_loss"]) and math.isfinite(metrics["test_loss"])
    assert 0.0 <= metrics["test_accuracy"] <= 1.0
    use_input_elmo, use_output_elmo = ELMO_PLACES[name]
    num_places = int(use_input_elmo) + int(use_output_elmo)
    logged_mixes = {key.split("_")[3] for key in metrics if key.startswith("training__elmo_mix")}
    assert logged_mixes == {f"mix{m}" for m in range(num_places)}
    model = load_archive(str(serialization_dir / "model.tar.gz")).model
    assert (model._use_input_elmo, model._use_output_elmo) == (use_input_elmo, use_output_elmo)


def test_allennlp_evaluate_on_the_archive(train, tmp_path):
    archive = train("snli_elmo_input_output") / "model.tar.gz"
    output = tmp_path / "metrics.json"
    run_allennlp("evaluate", str(archive), str(FIXTURES / "test.jsonl"), "--output-file", str(output))
    metrics = json.loads(output.read_text())
    assert 0.0 <= metrics["accuracy"] <= 1.0
    assert math.isfinite(metrics["loss"])
    assert 0.0 <= metrics["_elmo_mix1_lstm_2"] <= 1.0


def test_allennlp_predict_on_the_archive(train, tmp_path):
    archive = train("snli_elmo_input_output") / "model.tar.gz"
    output = tmp_path / "predictions.jsonl"
    run_allennlp(
        "predict", str(archive), str(FIXTURES / "predict_input.jsonl"),
        "--output-file", str(output), "--silent",
    )
    predictions = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(predictions) == 2  # one with premise/hypothesis keys, one with sentence1/sentence2
    assert predictions[1]["premise_tokens"] == "A man is playing a guitar .".split()
    for prediction in predictions:
        assert prediction["label"] in LABELS
        assert set(prediction["probabilities"]) == LABELS
        assert sum(prediction["probabilities"].values()) == pytest.approx(1.0, abs=1e-5)
        assert prediction["probabilities"][prediction["label"]] == pytest.approx(max(prediction["label_probs"]))


def test_predictor_from_the_archive(train):
    predictor = Predictor.from_path(str(train("snli_baseline") / "model.tar.gz"))
    assert type(predictor).__name__ == "NliPairPredictor"
    prediction = predictor.predict("A dog runs in the park .", "An animal is outside .")
    assert prediction["label"] in LABELS
    batch = predictor.predict_batch_json(
        [{"sentence1": "A dog runs .", "sentence2": "A cat sleeps ."}, {"premise": "A b .", "hypothesis": "C ."}]
    )
    assert [len(p["label_probs"]) for p in batch] == [3, 3]
    with pytest.raises(ValueError, match=r"expected one of the keys \['hypothesis', 'sentence2'\]"):
        predictor.predict_json({"premise": "A dog runs ."})
