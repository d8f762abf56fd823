"""`allennlp train` and `allennlp evaluate` on the bundled Wikipedia fixture, in-process."""

import json
import math
import os

import pytest
import torch
from allennlp.common import Params
from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.models import Model
from allennlp.models.archival import load_archive
from allennlp.training.util import evaluate

import elmo_plugin.allennlp.lm  # noqa: F401
from elmo_plugin.elmo.execution.settings import Conditions, Execution
from tests.published_sizes import published_options
from elmo_plugin.allennlp.lm.models import BilmLanguageModel
from tests.lm.conftest import TINY_BILM, allennlp_train, one_file_corpus, run_allennlp

CONFIG = "training_configs/bilm/bilm_tiny.jsonnet"
HELD_OUT = "training_configs/bilm/sample/wiki_valid.txt"
SENTENCES = "fixtures/lm/sentences.txt"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """The tiny config, shrunk, trained for one epoch on 1000 fixture sentences."""
    serialization_dir = str(tmp_path_factory.mktemp("bilm") / "run")
    overrides = {
        "dataset_reader.max_instances": 1000,
        "validation_dataset_reader": {"type": "bilm_corpus", "max_instances": 50},
        "model.bilm": TINY_BILM,
        "model.num_samples": 200,
        "trainer.num_epochs": 1,
    }
    allennlp_train(CONFIG, serialization_dir, overrides)
    return serialization_dir


def test_held_out_perplexity_of_both_directions_falls_over_an_epoch(trained, tmp_path):
    metrics_file = str(tmp_path / "metrics.json")
    run_allennlp(
        "evaluate", os.path.join(trained, "model.tar.gz"), HELD_OUT, "--output-file", metrics_file
    )
    after = json.load(open(metrics_file))

    archive = load_archive(os.path.join(trained, "model.tar.gz"))
    torch.manual_seed(0)
    untrained = Model.from_params(
        vocab=archive.model.vocab, params=archive.config.duplicate()["model"]
    )
    loader = MultiProcessDataLoader(archive.validation_dataset_reader, HELD_OUT, batch_size=32)
    loader.index_with(archive.model.vocab)
    before = evaluate(untrained, loader)

    for key in ("forward_perplexity", "backward_perplexity", "perplexity"):
        assert math.isfinite(after[key])
        assert after[key] < 0.5 * before[key], key
    assert before["perplexity"] > 0.5 * archive.model.vocab.get_vocab_size("tokens")


def test_evaluate_reports_the_full_softmax_perplexity(trained, tmp_path):
    """What `allennlp evaluate` prints is exp(mean NLL) of the exact softmax over the file."""
    metrics_file = str(tmp_path / "metrics.json")
    run_allennlp(
        "evaluate", os.path.join(trained, "model.tar.gz"), HELD_OUT, "--output-file", metrics_file
    )
    reported = json.load(open(metrics_file))
    model = load_archive(os.path.join(trained, "model.tar.gz")).model.eval()
    loader = MultiProcessDataLoader(
        load_archive(os.path.join(trained, "model.tar.gz")).validation_dataset_reader,
        HELD_OUT,
        batch_size=50,
    )
    loader.index_with(model.vocab)
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in loader:
            output = model(**batch)
            total += float(output["forward_loss"]) * int(output["num_targets"])
            count += int(output["num_targets"])
    assert reported["forward_perplexity"] == pytest.approx(math.exp(total / count), rel=1e-4)


def test_the_paper_recipe_trains_on_cpu_at_toy_size(tmp_path):
    """bilm_elmo_small.jsonnet (packed lanes, Adagrad, ...) with a tiny biLM and 4 lanes."""
    overrides = {
        **one_file_corpus(SENTENCES),
        "dataset_reader.num_lanes": 4,
        "data_loader.batch_size": 4,
        "model.bilm": TINY_BILM,
        "model.num_samples": 50,
        "trainer.cuda_device": -1,
        "trainer.num_epochs": 4,
    }
    allennlp_train("training_configs/bilm/bilm_elmo_small.jsonnet", tmp_path / "run", overrides)
    metrics = json.load(open(tmp_path / "run" / "metrics.json"))
    assert metrics["validation_perplexity"] < metrics["training_perplexity"] * 10
    assert metrics["validation_perplexity"] < 0.7 * 300  # ~300 words: far below chance


def test_the_wikipedia_cpu_config_streams_its_corpus(tmp_path):
    """bilm_wikipedia_cpu.jsonnet (lazy batching in chunks, epochs of a fixed number of
    batches) on the bundled corpus, with a tiny biLM."""
    overrides = {
        "train_data_path": "training_configs/bilm/sample/wiki_train.txt.xz",
        "validation_data_path": HELD_OUT,
        "vocabulary.corpus": "training_configs/bilm/sample/wiki_train.txt.xz",
        "validation_dataset_reader.max_instances": 20,
        "model.bilm": TINY_BILM,
        "model.num_samples": 100,
        "data_loader.max_instances_in_memory": 200,
        "data_loader.batches_per_epoch": 3,
        "trainer.num_epochs": 2,
    }
    allennlp_train("training_configs/bilm/bilm_wikipedia_cpu.jsonnet", tmp_path / "run", overrides)
    metrics = json.load(open(tmp_path / "run" / "metrics.json"))
    assert metrics["epoch"] == 1 and math.isfinite(metrics["validation_perplexity"])


@pytest.mark.slow
def test_the_papers_original_size_builds_and_takes_training_steps(tmp_path):
    """bilm_elmo_original.jsonnet as is (2 x 4096 cells, 512 projections, 2048 filters),
    on CPU, for two batches of 2 lanes."""
    overrides = {
        **one_file_corpus(SENTENCES),
        "dataset_reader.num_lanes": 2,
        "dataset_reader.max_instances": 4,
        "data_loader.batch_size": 2,
        "trainer.cuda_device": -1,
        "trainer.num_epochs": 1,
    }
    allennlp_train("training_configs/bilm/bilm_elmo_original.jsonnet", tmp_path / "run", overrides)
    metrics = json.load(open(tmp_path / "run" / "metrics.json"))
    assert math.isfinite(metrics["training_loss"]) and math.isfinite(metrics["validation_loss"])
    model = load_archive(str(tmp_path / "run" / "model.tar.gz")).model
    assert isinstance(model, BilmLanguageModel)
    options = model.bilm.options()
    assert options["lstm"]["dim"] == 4096 and options["lstm"]["projection_dim"] == 512


def test_the_configs_parse_and_the_paper_configs_have_the_papers_sizes():
    configs = {}
    for name in sorted(os.listdir("training_configs/bilm")):
        if name.endswith(".jsonnet"):
            configs[name] = Params.from_file(os.path.join("training_configs/bilm", name)).as_dict()
            assert configs[name]["model"]["type"] == "bilm", name
    original = configs["bilm_elmo_original.jsonnet"]
    # bilm-tf trains with 261 characters.
    assert original["model"]["bilm"] == published_options("original", n_characters=261)
    small = configs["bilm_elmo_small.jsonnet"]["model"]["bilm"]
    assert small == published_options("small", n_characters=261)
    cnn, lstm = original["model"]["bilm"]["char_cnn"], original["model"]["bilm"]["lstm"]
    assert sum(n for _, n in cnn["filters"]) == 2048 and cnn["n_highway"] == 2
    assert (lstm["n_layers"], lstm["dim"], lstm["projection_dim"]) == (2, 4096, 512)
    assert original["model"]["num_samples"] == 8192
    assert {
        k: v for k, v in original["trainer"]["optimizer"].items() if k != "parameter_groups"
    } == {
        "type": "adagrad",
        "lr": 0.2,
        "initial_accumulator_value": 1,
    }
    assert original["trainer"]["grad_norm"] == 10
    assert original["dataset_reader"]["mode"] == "packed"
    assert original["data_loader"]["batch_size"] == original["dataset_reader"]["num_lanes"]
    small = configs["bilm_elmo_small.jsonnet"]["model"]["bilm"]
    assert (
        small["lstm"]["dim"],
        small["lstm"]["projection_dim"],
        small["char_cnn"]["n_highway"],
    ) == (1024, 128, 1)
    multigpu = configs["bilm_elmo_original_multigpu.jsonnet"]
    assert (
        multigpu["distributed"]["cuda_devices"] == [0, 1, 2]
        and "cuda_device" not in multigpu["trainer"]
    )


def test_every_bilm_config_runs_on_the_cpu_and_the_paper_configs_replay_graphs_on_cuda():
    """A config's `true` is a demand (refused where it cannot run); the paper's CUDA graphs are
    `"auto"`: on CUDA, as measured, and none on the CPU, where training must still run."""
    for name in sorted(os.listdir("training_configs/bilm")):
        if not name.endswith(".jsonnet"):
            continue
        model = Params.from_file(os.path.join("training_configs/bilm", name)).as_dict()["model"]
        execution = Execution.resolve(model.get("execution"), model.get("compute_dtype"))
        cpu = Conditions(torch.device("cpu"), True, False, True)
        assert execution.refusals(cpu, execution.dtype) == [], name
        if name.startswith("bilm_elmo_original"):
            assert execution.uses_cuda_graphs(torch.device("cuda")), name
