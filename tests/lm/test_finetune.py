"""Domain adaptation from config: continue training an exported or a published biLM."""

import json
import math
import os

import torch
from allennlp.models.archival import load_archive

import elmo_plugin.allennlp.commands  # noqa: F401
import elmo_plugin.allennlp.lm  # noqa: F401
from elmo_plugin.elmo import load_bilm
from elmo_plugin.allennlp.lm.models import BilmLanguageModel
from elmo_plugin.allennlp.lm.perplexity import held_out_perplexity, language_model_from_export
from tests.lm.conftest import TINY_BILM, allennlp_train, run_allennlp

CAPTIONS_TRAIN = "fixtures/lm/captions_train.txt"
CAPTIONS_VALID = "fixtures/lm/captions_valid.txt"
FINETUNE = "training_configs/bilm/bilm_finetune.jsonnet"


def _held_out_perplexity(model) -> float:
    return held_out_perplexity(model, CAPTIONS_VALID)["perplexity"]


def test_fine_tuning_an_export_on_captions_lowers_their_perplexity(tmp_path):
    wikipedia = {
        "dataset_reader.max_instances": 600,
        "validation_data_path": "fixtures/lm/sentences.txt",
        "model.bilm": TINY_BILM,
        "model.num_samples": 200,
        "trainer.num_epochs": 1,
    }
    allennlp_train("training_configs/bilm/bilm_tiny.jsonnet", tmp_path / "wiki", wikipedia)
    export = str(tmp_path / "elmo")
    run_allennlp(
        "elmo-export", str(tmp_path / "wiki" / "model.tar.gz"), export, "--include-softmax"
    )
    before = _held_out_perplexity(language_model_from_export(export))

    captions = {
        "dataset_reader.max_instances": 600,
        "vocabulary.vocab_file": os.path.join(export, "vocab.txt"),
        "model.options_file": os.path.join(export, "options.json"),
        "model.weight_file": os.path.join(export, "weights.hdf5"),
        "model.softmax_file": os.path.join(export, "softmax.hdf5"),
        "model.num_samples": 200,
    }
    allennlp_train(FINETUNE, tmp_path / "captions", captions)
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
    allennlp_train(FINETUNE, tmp_path / "run", overrides)
    model = load_archive(str(tmp_path / "run" / "model.tar.gz")).model
    assert isinstance(model, BilmLanguageModel)
    published = load_bilm(elmo_options, elmo_weights)
    for name, value in published.state_dict().items():
        assert torch.equal(value, model.bilm.state_dict()[name]), name
    run_allennlp("elmo-export", str(tmp_path / "run" / "model.tar.gz"), str(tmp_path / "export"))
    assert (
        json.load(open(tmp_path / "export" / "options.json"))["lstm"]
        == json.load(open(elmo_options))["lstm"]
    )


def test_the_config_as_it_is_adapts_the_shipped_bilm_to_captions(tmp_path):
    """bilm_finetune.jsonnet starts from elmo_plugin/pretrained/ (weights, 16-bit softmax,
    vocabulary)."""
    before = _held_out_perplexity(
        language_model_from_export("elmo_plugin/pretrained/elmo_wikipedia_512x128")
    )
    allennlp_train(FINETUNE, tmp_path / "captions", {"dataset_reader.max_instances": 600})
    after = _held_out_perplexity(load_archive(str(tmp_path / "captions" / "model.tar.gz")).model)
    assert math.isfinite(after) and after < 0.8 * before
