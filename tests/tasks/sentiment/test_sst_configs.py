"""
The SST configs train one epoch on the fixtures (through `train_model_from_file`, what
`allennlp train` runs, with the shipped biLM, and one with an ELMoForManyLangs model chosen by
the config alone), with the sizes shrunk; `allennlp predict` and the
predictor then run on an archive, from outside the clone.
"""

import json
import math
import sys
from typing import List, Tuple
from unittest import mock

import pytest
from allennlp.commands import main
from allennlp.common.util import JsonDict
from allennlp.data.fields import LabelField
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

import elmo_plugin.allennlp  # noqa: F401
from elmo_plugin.elmo import parse_layer_weight_metric_name
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml import EfmlBiLm
from elmo_plugin.allennlp.tasks.sentiment.models import BcnClassifier
from elmo_plugin.allennlp.tasks.sentiment.predictors import SentenceSentimentPredictor
from tests.fields import field_of
from tests.paths import TRAINING_CONFIGS
from tests.tasks.sentiment.sst_small_overrides import FIXTURES, SMALL
from tests.tasks.training_helpers import EFML_VARIANT, trained_once

CONFIGS = TRAINING_CONFIGS / "sentiment"
LABELS = {"0", "1", "2", "3", "4"}
NUM_ELMO_PLACES = {"sst_baseline": 0, "sst_elmo": 1, "sst_elmo_input_output": 2}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Trains a config once per module; returns its serialization directory."""
    return trained_once(tmp_path_factory, CONFIGS, lambda config: SMALL)


@pytest.mark.parametrize("name", sorted(NUM_ELMO_PLACES) + ["sst_elmo_input_output" + EFML_VARIANT])
def test_config_trains_one_epoch_and_evaluates_on_the_test_roots(trained, name):
    metrics = json.loads((trained(name) / "metrics.json").read_text())
    assert metrics["epoch"] == 0
    assert math.isfinite(metrics["training_loss"]) and math.isfinite(metrics["test_loss"])
    assert 0.0 <= metrics["test_accuracy"] <= 1.0
    parsed = [parse_layer_weight_metric_name(key) for key in metrics]
    mixes = {p.mix for p in parsed if p and p.phase == "training"}
    assert mixes == set(range(NUM_ELMO_PLACES[name.removesuffix(EFML_VARIANT)]))
    model = load_archive(str(trained(name) / "model.tar.gz")).model
    assert isinstance(model, BcnClassifier)
    places = model._elmo_places
    expected = (name != "sst_baseline", name.startswith("sst_elmo_input_output"))
    assert (places.use_input_elmo, places.use_output_elmo) == expected
    efml = model._elmo is not None and isinstance(model._elmo.bilm, EfmlBiLm)
    assert efml == name.endswith(EFML_VARIANT)


def test_allennlp_predict_on_the_archive(trained, tmp_path):
    output = tmp_path / "predictions.jsonl"
    with mock.patch.object(
        sys,
        "argv",
        [
            "allennlp",
            "predict",
            str(trained("sst_elmo") / "model.tar.gz"),
            str(FIXTURES / "predict_input.jsonl"),
            "--output-file",
            str(output),
            "--silent",
            "--include-package",
            "elmo_plugin",
        ],
    ):
        main()
    predictions = [json.loads(line) for line in output.read_text().splitlines()]
    assert [p["tokens"] for p in predictions] == [
        ["A", "lovely", "film", "with", "lovely", "performances", "."],
        ["It", "is", "n't", "funny", "."],
    ]
    for prediction in predictions:
        assert prediction["label"] in LABELS and set(prediction["probabilities"]) == LABELS
        assert sum(prediction["probabilities"].values()) == pytest.approx(1.0, abs=1e-5)
        best = max(prediction["class_probabilities"])
        assert prediction["probabilities"][prediction["label"]] == pytest.approx(best)


@pytest.mark.parametrize("name", sorted(NUM_ELMO_PLACES))
def test_the_predictor_from_an_archive_outside_the_clone(trained, tmp_path, monkeypatch, name):
    archive = tmp_path / "elsewhere" / "model.tar.gz"
    archive.parent.mkdir()
    archive.write_bytes((trained(name) / "model.tar.gz").read_bytes())
    monkeypatch.chdir(archive.parent)
    predictor = Predictor.from_path(str(archive))
    assert type(predictor) is SentenceSentimentPredictor
    prediction = predictor.predict("A warm, funny, engaging film.")
    assert prediction["label"] in LABELS
    assert prediction["tokens"] == ["A", "warm", ",", "funny", ",", "engaging", "film", "."]
    # allennlp.interpret's input: the instance labelled with the predicted class's index
    (labeled,) = predictor.json_to_labeled_instances({"sentence": "A warm, funny, engaging film."})
    probabilities = prediction["class_probabilities"]
    assert field_of(labeled, "label", LabelField).label == probabilities.index(max(probabilities))
    batch = predictor.predict_batch_json([{"sentence": "Dull ."}, {"tokens": ["Fun", "!"]}])
    assert [len(p["class_probabilities"]) for p in batch] == [5, 5]
    bad_inputs: List[Tuple[JsonDict, str]] = [
        ({"text": "x"}, "expected a 'sentence' string or a 'tokens' list"),
        ({"sentence": 3}, "'sentence' must be a string"),
        ({"tokens": "a b"}, "'tokens' must be a list of strings"),
        ({"sentence": "   "}, "no tokens to classify"),
    ]
    for bad, message in bad_inputs:
        with pytest.raises(ConfigurationError, match=message):
            predictor.predict_json(bad)
