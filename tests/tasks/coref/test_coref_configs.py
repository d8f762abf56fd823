"""
Both coreference configs train one epoch on the fixtures (through `train_model_from_file`, what
`allennlp train` runs, with the shipped biLM, and the ELMo one with an ELMoForManyLangs model
chosen by the config alone), with the sizes shrunk, and evaluate on the test
documents; `allennlp predict` and the predictor then run on an archive, from outside the clone.
"""

import json
import math
import sys
from typing import List, Tuple
from unittest import mock

import pytest
from allennlp.commands import main
from allennlp.common.util import JsonDict
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

import elmo_plugin.allennlp  # noqa: F401
from elmo_plugin.elmo import parse_layer_weight_metric_name
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml import EfmlBiLm
from elmo_plugin.allennlp.tasks.coref.dataset_readers import LitbankCorefReader
from elmo_plugin.allennlp.tasks.coref.models import SpanRankingCoref
from elmo_plugin.allennlp.tasks.coref.predictors import CorefClustersPredictor
from tests.paths import TRAINING_CONFIGS
from tests.tasks.coref.coref_small_overrides import FIXTURES, SMALL
from tests.tasks.training_helpers import EFML_VARIANT, trained_once

CONFIGS = TRAINING_CONFIGS / "coref"
NAMES = ["coref_baseline", "coref_elmo"]
SCORES = [
    f"{metric}_{kind}"
    for metric in ("muc", "b3", "ceafe", "coref")
    for kind in ("precision", "recall", "f1")
]
DOCUMENT = "Mr. Jones came home late. He was tired, and his dog barked at him."


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Trains a config once per module; returns its serialization directory."""
    return trained_once(tmp_path_factory, CONFIGS, lambda config: SMALL)


@pytest.mark.parametrize("name", NAMES + ["coref_elmo" + EFML_VARIANT])
def test_config_trains_one_epoch_and_evaluates_on_the_test_documents(trained, name):
    metrics = json.loads((trained(name) / "metrics.json").read_text())
    assert metrics["epoch"] == 0
    assert math.isfinite(metrics["training_loss"]) and math.isfinite(metrics["test_loss"])
    for key in SCORES + ["mention_recall"]:
        assert 0.0 <= metrics[f"test_{key}"] <= 1.0, key
        assert f"best_validation_{key}" in metrics
    parsed = [parse_layer_weight_metric_name(key) for key in metrics]
    assert {p.mix for p in parsed if p and p.phase == "training"} == (
        {0} if name.startswith("coref_elmo") else set()
    )
    model = load_archive(str(trained(name) / "model.tar.gz")).model
    assert isinstance(model, SpanRankingCoref)
    assert model._elmo_places.use_input_elmo == name.startswith("coref_elmo")
    efml = model._elmo is not None and isinstance(model._elmo.bilm, EfmlBiLm)
    assert efml == name.endswith(EFML_VARIANT)


def test_training_reads_segments_and_evaluation_whole_documents(trained):
    archive = load_archive(str(trained("coref_baseline") / "model.tar.gz"))
    assert isinstance(archive.dataset_reader, LitbankCorefReader)
    assert isinstance(archive.validation_dataset_reader, LitbankCorefReader)
    assert archive.dataset_reader.max_tokens == SMALL["dataset_reader.max_tokens"]
    assert archive.validation_dataset_reader.max_tokens is None
    assert archive.dataset_reader.remove_singleton_clusters


def test_allennlp_predict_on_the_archive(trained, tmp_path):
    output = tmp_path / "predictions.jsonl"
    argv = [
        "allennlp",
        "predict",
        str(trained("coref_elmo") / "model.tar.gz"),
        str(FIXTURES / "predict_input.jsonl"),
        "--output-file",
        str(output),
        "--silent",
        "--include-package",
        "elmo_plugin",
    ]
    with mock.patch.object(sys, "argv", argv):
        main()
    predictions = [json.loads(line) for line in output.read_text().splitlines()]
    assert predictions[0]["sentences"] == [
        ["Mr.", "Jones", "came", "home", "late", "."],
        ["He", "was", "tired", ",", "and", "his", "dog", "barked", "at", "him", "."],
    ]
    assert predictions[1]["words"] == "The old man saw the sea . He loved it .".split()
    for prediction in predictions:
        for cluster, texts in zip(prediction["clusters"], prediction["cluster_texts"]):
            assert len(cluster) == len(texts) > 1
            for (start, end), text in zip(cluster, texts):
                assert 0 <= start <= end < len(prediction["words"])
                assert text.split()[0] == prediction["words"][start]


@pytest.mark.parametrize("name", NAMES)
def test_the_predictor_from_an_archive_outside_the_clone(trained, tmp_path, monkeypatch, name):
    archive = tmp_path / "elsewhere" / "model.tar.gz"
    archive.parent.mkdir()
    archive.write_bytes((trained(name) / "model.tar.gz").read_bytes())
    monkeypatch.chdir(archive.parent)
    predictor = Predictor.from_path(str(archive))
    assert type(predictor) is CorefClustersPredictor
    prediction = predictor.predict(DOCUMENT)
    assert prediction["words"][:3] == ["Mr.", "Jones", "came"]
    assert len(prediction["sentences"]) == 2 and len(prediction["clusters"]) == len(
        prediction["cluster_texts"]
    )
    batch = predictor.predict_batch_json(
        [{"document": "He came. He left."}, {"sentences": [["Hi", "!"]]}]
    )
    assert [p["words"] for p in batch] == [["He", "came", ".", "He", "left", "."], ["Hi", "!"]]
    # allennlp.interpret's input: one instance a predicted cluster, labelled with it alone
    labeled = predictor.json_to_labeled_instances({"document": DOCUMENT})
    assert len(labeled) == max(1, len(prediction["clusters"]))
    bad_inputs: List[Tuple[JsonDict, str]] = [
        ({"text": "x"}, "expected a 'document' string or a 'sentences' list"),
        ({"document": 3}, "'document' must be a string"),
        ({"sentences": ["a b"]}, "'sentences' must be a list of lists of words"),
        ({"document": "   "}, "no words to resolve"),
        ({"sentences": [[" "]]}, "no words to resolve"),
    ]
    for bad, message in bad_inputs:
        with pytest.raises(ConfigurationError, match=message):
            predictor.predict_json(bad)
