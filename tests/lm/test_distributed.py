"""AllenNLP's `distributed` section with the `bilm` model: two CPU workers over gloo."""

import json
from collections import Counter

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.training.callbacks import TrainerCallback

import elmo_plugin.allennlp.lm  # noqa: F401
from tests.lm.conftest import TINY_BILM
from tests.ranks import free_port
from tests.training.batch_callbacks import TrainedBatchCallback

# Trains, builds a wheel or runs AllenNLP in a process of its own: `make test-fast` leaves it out.
pytestmark = pytest.mark.slow

SENTENCES = "fixtures/lm/sentences.txt"


@TrainerCallback.register("test_log_batches_per_worker")
class LogBatchesPerWorker(TrainedBatchCallback):
    """Writes the word ids of every sentence each worker trains on to `log.<rank>`."""

    def __init__(self, serialization_dir: str, log: str) -> None:
        super().__init__(serialization_dir)
        self.log = log

    def on_trained_batch(self, trainer, batch_inputs, batch_outputs, epoch, batch_number) -> None:
        rank = torch.distributed.get_rank()
        with open(f"{self.log}.{rank}", "a") as log:
            for row in batch_inputs[0]["targets"]["tokens"]["tokens"].tolist():
                log.write(f"{epoch} {' '.join(str(i) for i in row if i)}\n")


def test_two_cpu_workers_train_on_disjoint_halves_of_the_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # each worker one thread on a shared machine
    log = str(tmp_path / "batches")
    overrides = {
        "train_data_path": SENTENCES,
        "validation_data_path": SENTENCES,
        "vocabulary.corpus": SENTENCES,
        "model.bilm": TINY_BILM,
        "model.num_samples": 50,
        "data_loader.batch_sampler.batch_size": 4,
        "trainer.num_epochs": 2,
        "trainer.callbacks": [{"type": "test_log_batches_per_worker", "log": log}],
        "distributed": {"cuda_devices": [-1, -1], "master_port": free_port()},
    }
    train_model_from_file(
        "training_configs/bilm/bilm_tiny.jsonnet",
        str(tmp_path / "run"),
        overrides=json.dumps(overrides),
        include_package=["elmo_plugin.allennlp.lm", "tests.lm.test_distributed"],
    )
    metrics = json.load(open(tmp_path / "run" / "metrics.json"))
    assert metrics["epoch"] == 1
    assert 1 < metrics["validation_perplexity"] < metrics["training_perplexity"] * 10

    # Each epoch, the two workers saw the 40 sentences exactly once between them.
    seen = [Counter(open(f"{log}.{rank}").read().splitlines()) for rank in (0, 1)]
    for epoch in ("0", "1"):
        halves = [{s for s in worker if s.split()[0] == epoch} for worker in seen]
        assert len(halves[0]) == len(halves[1]) == 20
        assert not halves[0] & halves[1]


def test_recover_in_distributed_training_restores_no_random_states_and_says_why(
    tmp_path, monkeypatch
):
    """The shipped trainer (exact_resume_gradient_descent) in distributed training: each worker
    has its own random generators and the checkpoint holds the primary's, so `--recover`
    restores none and logs why; the rest of what it adds still holds (a finished run resumed
    after its last epoch keeps its metrics)."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    overrides = {
        "train_data_path": SENTENCES,
        "validation_data_path": SENTENCES,
        "vocabulary.corpus": SENTENCES,
        "model.bilm": TINY_BILM,
        "model.num_samples": 50,
        "data_loader.batch_sampler.batch_size": 4,
        "trainer.num_epochs": 1,
        "distributed": {"cuda_devices": [-1, -1], "master_port": free_port()},
    }
    run = tmp_path / "run"
    for recover in (False, True):
        train_model_from_file(
            "training_configs/bilm/bilm_tiny.jsonnet",
            str(run),
            overrides=json.dumps(overrides),
            include_package=["elmo_plugin.allennlp.lm"],
            recover=recover,
        )
        if not recover:
            finished = json.loads((run / "metrics.json").read_text())
    for rank in (0, 1):
        log = (run / f"out_worker{rank}.log").read_text()
        assert log.count("random states not restored") == 1, rank
    metrics = json.loads((run / "metrics.json").read_text())
    assert "training_loss" in finished and {key: metrics.get(key) for key in finished} == finished
