"""A checkpoint write cut short (a crash, a kill, a full disk) leaves the previous checkpoint and
`best.th` loadable."""

import os
from unittest import mock

import pytest
import torch
from allennlp.training.checkpointer import Checkpointer
from allennlp.training.trainer import TrainerCheckpoint

from elmo_plugin.allennlp.training import AtomicCheckpointer


class _Trainer:
    """What a checkpointer asks of a trainer: its state at a point in training."""

    def __init__(self, epochs: int, batches: int, value: float) -> None:
        self.state = TrainerCheckpoint(
            {"weight": torch.full((1000,), value)},
            {"epochs_completed": epochs, "batches_in_epoch_completed": batches, "value": value},
        )

    def get_checkpoint_state(self) -> TrainerCheckpoint:
        return self.state


def _cut_short(value, destination, *args, **kwargs):
    with open(destination, "wb") if isinstance(destination, str) else destination as handle:
        handle.write(b"PK\x03\x04 half a checkpoint")
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("checkpointer_class", [AtomicCheckpointer, Checkpointer])
@pytest.mark.parametrize("same_point", [True, False])
def test_a_write_cut_short_leaves_the_previous_checkpoint_and_best_th(
    tmp_path, checkpointer_class, same_point
):
    checkpointer = checkpointer_class(tmp_path, keep_most_recent_by_count=1)
    checkpointer.save_checkpoint(_Trainer(1, 0, 1.0))
    model_state, training_state = checkpointer.find_latest_checkpoint()
    os.link(model_state, tmp_path / "best.th")  # what GradientDescentTrainer does
    if same_point:  # e.g. a resumed run saving again the point it resumed from
        os.remove(model_state)
    with mock.patch("torch.save", _cut_short), pytest.raises(OSError):
        checkpointer.save_checkpoint(_Trainer(1, 0, 2.0) if same_point else _Trainer(1, 3, 2.0))
    if checkpointer_class is Checkpointer:
        # AllenNLP's: the partial file is there under the checkpoint's name.
        assert any(os.path.getsize(tmp_path / name) < 100 for name in os.listdir(tmp_path))
        return
    assert torch.equal(torch.load(tmp_path / "best.th")["weight"], torch.ones(1000))
    assert torch.load(training_state)["value"] == 1.0
    if not same_point:
        assert checkpointer.find_latest_checkpoint() == (model_state, training_state)
        assert torch.equal(torch.load(model_state)["weight"], torch.ones(1000))
        assert checkpointer.load_checkpoint().trainer_state["value"] == 1.0
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".partial")]


def test_files_are_replaced_whole_and_get_the_usual_mode(tmp_path):
    checkpointer = AtomicCheckpointer(tmp_path, keep_most_recent_by_count=2)
    previous = os.umask(0o022)
    try:
        for batches in (0, 3, 6):
            checkpointer.save_checkpoint(_Trainer(0, batches, float(batches)))
    finally:
        os.umask(previous)
    assert sorted(os.listdir(tmp_path)) == [
        "model_state_e0_b3.th",
        "model_state_e0_b6.th",
        "training_state_e0_b3.th",
        "training_state_e0_b6.th",
    ]
    assert all(os.stat(tmp_path / name).st_mode & 0o777 == 0o644 for name in os.listdir(tmp_path))
    checkpoint = checkpointer.load_checkpoint()
    assert checkpoint is not None
    assert checkpoint.trainer_state["value"] == 6.0


def test_a_full_disk_names_the_checkpoint_and_its_directory(tmp_path, monkeypatch):
    import collections
    import errno

    from elmo_plugin.elmo.files import atomic_files

    def torch_on_a_full_disk(value, destination, *args, **kwargs):
        raise RuntimeError(
            "[enforce fail at inline_container.cc:595] . PytorchStreamWriter failed writing file "
            "data/0: file write failed"
        )

    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(atomic_files.shutil, "disk_usage", lambda path: usage(10**9, 10**9, 4096))
    checkpointer = AtomicCheckpointer(tmp_path)
    with mock.patch("torch.save", torch_on_a_full_disk), pytest.raises(OSError) as caught:
        checkpointer.save_checkpoint(_Trainer(1, 0, 1.0))
    assert caught.value.errno == errno.ENOSPC
    message = str(caught.value)
    assert (
        "no space left on the disk holding " + str(tmp_path) in message
        and "training_state_e1_b0.th" in message
    )
    assert os.listdir(tmp_path) == []
