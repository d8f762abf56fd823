"""Domain adaptation from config: continue training an exported or a published biLM."""
import json
import math
import os
import sys
from unittest import mock

import pytest
import torch
from allennlp.commands import main
from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.models.archival import load_archive
from allennlp.training.util import evaluate

import elmo_plugin.commands  # noqa: F401
import elmo_plugin.lm  # noqa: F401
from elmo_plugin.elmo import load_bilm
from elmo_plugin.lm.corpus_vocabulary import CorpusVocabulary
from elmo_plugin.lm.dataset_readers import BilmCorpusReader
from elmo_plugin.lm.models import BilmLanguageModel
from tests.lm.conftest import TINY_BILM

CAPTIONS_TRAIN = "fixtures/lm/captions_train.txt"
CAPTIONS_VALID = "fixtures/lm/captions_valid.txt"


def run_allennlp(*argv: str) -> None:
    with mock.patch.object(sys, "argv", ["allennlp", *argv]):
        main()


def _held_out_perplexity(model) -> float:
    loader = MultiProcessDataLoader(BilmCorpusReader(), CAPTIONS_VALID, batch_size=64)
    loader.index_with(model.vocab)
    return evaluate(model, loader)["perplexity"]


def test_fine_tuning_an_export_on_captions_lowers_their_perplexity(tmp_path):
    wikipedia = {
        "dataset_reader.max_instances": 600,
        "validation_data_path": "fixtures/lm/sentences.txt",
        "model.bilm": TINY_BILM,
        "model.num_samples": 200,
        "trainer.num_epochs": 1,
    }
    run_allennlp("train", "training_configs/bilm/bilm_tiny.jsonnet", "-s", str(tmp_path / "wiki"), "-o", json.dumps(wikipedia))
    export = str(tmp_path / "elmo")
    run_allennlp("elmo-export", str(tmp_path / "wiki" / "model.tar.gz"), export, "--include-softmax")
    before = _held_out_perplexity(
        BilmLanguageModel(
            CorpusVocabulary.from_corpus(vocab_file=os.path.join(export, "vocab.txt")),
            options_file=os.path.join(export, "options.json"),
            weight_file=os.path.join(export, "weights.hdf5"),
            softmax_file=os.path.join(export, "softmax.hdf5"),
        )
    )

    captions = {
        "dataset_reader.max_instances": 600,
        "vocabulary.vocab_file": os.path.join(export, "vocab.txt"),
        "model.options_file": os.path.join(export, "options.json"),
        "model.weight_file": os.path.join(export, "weights.hdf5"),
        "model.softmax_file": os.path.join(export, "softmax.hdf5"),
        "model.num_samples": 200,
    }
    run_allennlp("train", "training_configs/bilm/bilm_finetune.jsonnet", "-s", str(tmp_path / "captions"), "-o", json.dumps(captions))
    after = _held_out_perplexity(load_archive(str(tmp_path / "captions" / "model.tar.gz")).model)
    assert math.isfinite(after) and after < 0.8 * before


def test_fine_tuning_starts_from_a_published_bilm(tmp_path, elmo_options, elmo_weights):
    overrides = {
        "dataset_reader.max_instances": 100,
        "vocabulary": {"type": "from_corpus", "corpus": CAPTIONS_TRAIN},
        "model.options_file": elmo_options,
        "model.weight_file": elmo_weights,
        "model.softmax_file": None,
        "model.num_samples": 100,
        "model.dropout": 0.0,
        "trainer.optimizer.lr": 0.0,  # no update: the trained weights must be the published ones
    }
    run_allennlp("train", "training_configs/bilm/bilm_finetune.jsonnet", "-s", str(tmp_path / "run"), "-o", json.dumps(overrides))
    model = load_archive(str(tmp_path / "run" / "model.tar.gz")).model
    published = load_bilm(elmo_options, elmo_weights)
    for name, value in published.state_dict().items():
        assert torch.equal(value, model.bilm.state_dict()[name]), name
    run_allennlp("elmo-export", str(tmp_path / "run" / "model.tar.gz"), str(tmp_path / "export"))
    assert json.load(open(tmp_path / "export" / "options.json"))["lstm"] == json.load(open(elmo_options))["lstm"]


def test_the_config_as_it_is_adapts_the_shipped_bilm_to_captions(tmp_path):
    """bilm_finetune.jsonnet starts from pretrained/ (weights, 16-bit softmax, vocabulary)."""
    shipped = "pretrained/elmo_wikipedia_512x128"
    before = _held_out_perplexity(
        BilmLanguageModel(
            CorpusVocabulary.from_corpus(vocab_file=os.path.join(shipped, "vocab.txt")),
            options_file=os.path.join(shipped, "options.json"),
            weight_file=os.path.join(shipped, "weights.hdf5"),
            softmax_file=os.path.join(shipped, "softmax.hdf5"),
        )
    )
    overrides = {"dataset_reader.max_instances": 600}
    run_allennlp("train", "training_configs/bilm/bilm_finetune.jsonnet", "-s", str(tmp_path / "captions"), "-o", json.dumps(overrides))
    after = _held_out_perplexity(load_archive(str(tmp_path / "captions" / "model.tar.gz")).model)
    assert math.isfinite(after) and after < 0.8 * before
