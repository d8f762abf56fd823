"""Interrupting `allennlp train` and resuming with `--recover` loses no progress."""

import json
import os
import sys
from unittest import mock

import pytest
import torch
from allennlp.commands import main
from allennlp.training.callbacks import TrainerCallback

import elmo_plugin.allennlp.lm  # noqa: F401
from tests.lm.conftest import TINY_BILM
from tests.training.batch_callbacks import TrainedBatchCallback, interrupt_once_at

SENTENCES = "fixtures/lm/sentences.txt"
INTERRUPT_AT = 15  # of 20 batches: epoch 2, two batches after its mid-epoch checkpoint


@TrainerCallback.register("test_interrupt_once")
class InterruptOnce(TrainedBatchCallback):
    """Records every trained batch and what was in it; raises KeyboardInterrupt (what Ctrl-C
    raises) once, after `INTERRUPT_AT` batches."""

    def __init__(self, serialization_dir: str, log: str, marker: str) -> None:
        super().__init__(serialization_dir)
        self.log, self.marker = log, marker

    def on_trained_batch(self, trainer, batch_inputs, batch_outputs, epoch, batch_number) -> None:
        targets = int(batch_inputs[0]["targets"]["tokens"]["tokens"].sum())
        with open(self.log, "a") as log:
            log.write(f"{epoch} {batch_number} {targets}\n")
        interrupt_once_at(self.log, INTERRUPT_AT, self.marker)


def _train(serialization_dir: str, log: str, marker: str, *extra: str) -> None:
    overrides = {
        "train_data_path": SENTENCES,
        "validation_data_path": SENTENCES,
        "vocabulary.corpus": SENTENCES,
        "model.bilm": TINY_BILM,
        # Full softmax and no dropout: training is deterministic, so runs can be compared.
        "model.num_samples": None,
        "model.dropout": 0.0,
        "data_loader.batch_sampler.batch_size": 4,
        "trainer.num_epochs": 2,
        "trainer.checkpointer": {"save_every_num_batches": 3, "keep_most_recent_by_count": 2},
        "trainer.callbacks": [{"type": "test_interrupt_once", "log": log, "marker": marker}],
    }
    argv = [
        "allennlp",
        "train",
        "training_configs/bilm/bilm_tiny.jsonnet",
        "-s",
        serialization_dir,
        "-o",
        json.dumps(overrides),
        *extra,
    ]
    with mock.patch.object(sys, "argv", argv):
        main()


def _trained_batches(log: str):
    """(epoch, batch number, sum of its word ids) of each trained batch, in order."""
    return [tuple(map(int, line.split())) for line in open(log)]


def test_recover_continues_from_the_last_checkpoint_and_ends_where_an_uninterrupted_run_does(
    tmp_path,
):
    _train(str(tmp_path / "straight"), str(tmp_path / "straight.log"), "")
    straight = torch.load(tmp_path / "straight" / "best.th")
    all_batches = _trained_batches(str(tmp_path / "straight.log"))
    assert len(all_batches) == 20  # 40 sentences, batches of 4, two epochs

    run, log, marker = str(tmp_path / "run"), str(tmp_path / "run.log"), str(tmp_path / "marker")
    with pytest.raises(KeyboardInterrupt):
        _train(run, log, marker)
    before = _trained_batches(log)
    assert before == all_batches[:INTERRUPT_AT]
    checkpoints = sorted(f for f in os.listdir(run) if f.startswith("model_state"))
    assert "model_state_e1_b3.th" in checkpoints  # epoch 2 (0-based 1), after 3 batches

    _train(run, log, marker, "--recover")
    after = _trained_batches(log)[INTERRUPT_AT:]
    # Training resumed right after the checkpoint (batch 3 of epoch 2, the 13th batch) with
    # the very batches of the uninterrupted run: the two after the checkpoint were redone.
    assert after == all_batches[13:]
    recovered = torch.load(os.path.join(run, "best.th"))
    for name, value in straight.items():
        assert torch.allclose(value, recovered[name], atol=1e-6), name
    metrics = json.load(open(os.path.join(run, "metrics.json")))
    expected = json.load(open(tmp_path / "straight" / "metrics.json"))
    assert metrics["epoch"] == 1
    assert metrics["validation_perplexity"] == pytest.approx(
        expected["validation_perplexity"], rel=1e-6
    )
