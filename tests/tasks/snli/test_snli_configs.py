"""
Every SNLI config trains for one epoch on the fixtures (through `train_model_from_file`, what
`allennlp train` runs), with the sizes shrunk; `allennlp evaluate` and `allennlp predict` then
run on an archive.
"""

import contextlib
import json
import math
import signal
import sys
from pathlib import Path
from unittest import mock

from allennlp.common import params
import pytest
from allennlp.commands import main
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

import elmo_plugin.allennlp  # noqa: F401
import elmo_plugin.allennlp.tasks.snli  # noqa: F401
from elmo_plugin.elmo import parse_layer_weight_metric_name
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml import EfmlBiLm
from elmo_plugin.allennlp.tasks.snli.dataset_readers import SnliJsonlReader
from elmo_plugin.allennlp.tasks.snli.models import EsimNli
from elmo_plugin.allennlp.tasks.snli.predictors import NliPairPredictor
from tests.paths import TRAINING_CONFIGS
from tests.tasks.snli.snli_small_overrides import FIXTURES, SMALL
from tests.tasks.training_helpers import EFML_VARIANT, trained_once

CONFIGS = TRAINING_CONFIGS / "snli"
LABELS = {"entailment", "neutral", "contradiction"}
ELMO_PLACES = {
    "snli_baseline": (False, False),
    "snli_elmo_input": (True, False),
    "snli_elmo_output": (False, True),
    "snli_elmo_input_output": (True, True),
}


def shrinking_overrides(config_path: Path) -> dict:
    # The model sets the input sizes of its encoders and feedforwards itself.
    model = json.loads(params.evaluate_file(str(config_path)))["model"]
    assert (
        "input_size" not in model["encoder"] and "input_dim" not in model["projection_feedforward"]
    )
    assert "input_size" not in model["inference_encoder"]
    assert "input_dim" not in model["output_feedforward"]
    return SMALL


@pytest.mark.parametrize("name", [name for name, places in ELMO_PLACES.items() if any(places)])
def test_elmo_at_the_input_is_dropped_by_the_model_not_again_by_elmo(name):
    # esim_nli drops its encoder's input (ELMo at the input included) with `dropout`; ELMo's own
    # dropout on top of it cost 2.5 points of SNLI accuracy at every seed.
    model = json.loads(params.evaluate_file(str(CONFIGS / f"{name}.jsonnet")))["model"]
    assert model["elmo"]["dropout"] == 0.0 and model["dropout"] == 0.5


@pytest.fixture(scope="module")
def train(tmp_path_factory):
    """Trains a config once per module; returns its serialization directory."""
    return trained_once(tmp_path_factory, CONFIGS, shrinking_overrides)


def run_allennlp(*args: str) -> None:
    with mock.patch.object(sys, "argv", ["allennlp", *args, "--include-package", "elmo_plugin"]):
        main()


# The ELMoForManyLangs fixture as the biLM, chosen by the config alone, once: frozen.
@pytest.mark.parametrize("name", sorted(ELMO_PLACES) + ["snli_elmo_input_output" + EFML_VARIANT])
def test_config_trains_one_epoch_and_evaluates_on_test(train, name):
    serialization_dir = train(name)
    metrics = json.loads((serialization_dir / "metrics.json").read_text())
    assert metrics["epoch"] == 0
    assert math.isfinite(metrics["training_loss"]) and math.isfinite(metrics["test_loss"])
    assert 0.0 <= metrics["test_accuracy"] <= 1.0
    use_input_elmo, use_output_elmo = ELMO_PLACES[name.removesuffix(EFML_VARIANT)]
    num_places = int(use_input_elmo) + int(use_output_elmo)
    parsed = [parse_layer_weight_metric_name(key) for key in metrics]
    logged_mixes = {f"mix{name.mix}" for name in parsed if name and name.phase == "training"}
    assert logged_mixes == {f"mix{m}" for m in range(num_places)}
    model = load_archive(str(serialization_dir / "model.tar.gz")).model
    assert isinstance(model, EsimNli)
    places = model._elmo_places
    assert (places.use_input_elmo, places.use_output_elmo) == (use_input_elmo, use_output_elmo)
    efml = model._elmo is not None and isinstance(model._elmo.bilm, EfmlBiLm)
    assert efml == name.endswith(EFML_VARIANT)


def test_allennlp_evaluate_on_the_archive(train, tmp_path):
    archive = train("snli_elmo_input_output") / "model.tar.gz"
    output = tmp_path / "metrics.json"
    run_allennlp(
        "evaluate", str(archive), str(FIXTURES / "test.jsonl"), "--output-file", str(output)
    )
    metrics = json.loads(output.read_text())
    assert 0.0 <= metrics["accuracy"] <= 1.0
    assert math.isfinite(metrics["loss"])
    assert 0.0 <= metrics["_elmo_mix1_lstm_2"] <= 1.0


def test_allennlp_predict_on_the_archive(train, tmp_path):
    archive = train("snli_elmo_input_output") / "model.tar.gz"
    output = tmp_path / "predictions.jsonl"
    run_allennlp(
        "predict",
        str(archive),
        str(FIXTURES / "predict_input.jsonl"),
        "--output-file",
        str(output),
        "--silent",
    )
    predictions = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(predictions) == 2  # one with premise/hypothesis keys, one with sentence1/sentence2
    assert predictions[1]["premise_tokens"] == "A man is playing a guitar .".split()
    for prediction in predictions:
        assert prediction["label"] in LABELS
        assert set(prediction["probabilities"]) == LABELS
        assert sum(prediction["probabilities"].values()) == pytest.approx(1.0, abs=1e-5)
        assert prediction["probabilities"][prediction["label"]] == pytest.approx(
            max(prediction["label_probs"])
        )


def test_predictor_from_the_archive(train):
    predictor = Predictor.from_path(str(train("snli_baseline") / "model.tar.gz"))
    assert type(predictor) is NliPairPredictor
    prediction = predictor.predict("A dog runs in the park .", "An animal is outside .")
    assert prediction["label"] in LABELS
    batch = predictor.predict_batch_json(
        [
            {"sentence1": "A dog runs .", "sentence2": "A cat sleeps ."},
            {"premise": "A b .", "hypothesis": "C ."},
        ]
    )
    assert [len(p["label_probs"]) for p in batch] == [3, 3]
    with pytest.raises(
        ConfigurationError, match=r"expected one of the keys \['hypothesis', 'sentence2'\]"
    ):
        predictor.predict_json({"premise": "A dog runs ."})


def test_max_sentence_length_in_a_config_reaches_the_reader(tmp_path):
    overrides = json.dumps({"dataset_reader.max_sentence_length": 3})
    params = Params.from_file(str(CONFIGS / "snli_baseline.jsonnet"), overrides)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    assert isinstance(reader, SnliJsonlReader)
    assert reader.max_sentence_length == 3
    assert [len(i["premise"]) for i in reader.read(FIXTURES / "dev.jsonl")][:1] == [3]


def test_a_10000_token_premise_does_not_stall_a_tiny_training_run(tmp_path):
    # One huge premise costs at most the reader's maximum: about 5 s here, against about 60 s
    # with `max_sentence_length: null` (the 10,000 tokens kept) on the same machine.
    train = tmp_path / "train.jsonl"
    premise = " ".join(["dog"] * 10_000)
    huge = {"gold_label": "neutral", "sentence1": premise, "sentence2": "A dog ."}
    train.write_text((FIXTURES / "train.jsonl").read_text() + json.dumps(huge) + "\n")
    overrides = dict(SMALL, train_data_path=str(train))
    with time_limit(seconds=30):
        train_model_from_file(
            str(CONFIGS / "snli_baseline.jsonnet"), str(tmp_path / "run"), json.dumps(overrides)
        )
    expected = "train.jsonl, line 41: sentence1: a sentence of 10000 tokens, over the maximum"
    assert expected in (tmp_path / "run" / "out.log").read_text()


@contextlib.contextmanager
def time_limit(seconds: int):
    """Fails the test with TimeoutError after `seconds` instead of letting it hang."""

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
