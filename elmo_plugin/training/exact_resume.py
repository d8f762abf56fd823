import json
import logging
import os
from typing import Any, Dict, Iterator, Optional

from allennlp.data import DataLoader, TensorDict
from allennlp.training.callbacks import TrainerCallback
from overrides import overrides

from elmo_plugin.training import random_states
from elmo_plugin.training.atomic_checkpointer import save_atomically
from elmo_plugin.training.random_states import RandomStates

logger = logging.getLogger(__name__)


@TrainerCallback.register("exact_resume")
class ExactResume(TrainerCallback):
    """
    Makes a run resumed with `allennlp train --recover` continue exactly as the interrupted
    run did: the same data order and the same dropout masks, sampled-softmax samples and any
    other random draws, so that it ends with the same weights and metrics, bit for bit.

    AllenNLP's `GradientDescentTrainer` restores the model, optimizer and counters of a
    checkpoint and replays the data loader up to it, but draws every random number afresh from
    the config's seeds. This callback adds to each checkpoint (through `state_dict`, which the
    trainer saves with it) the states of Python's, NumPy's and torch's (CPU and CUDA) random
    generators at two moments: when the epoch in progress asked the data loader for its batches
    (which fixes the epoch's order) and at the checkpoint itself. On `--recover` it sets the
    first back before the resumed epoch's data loader starts and the second just before the
    first batch after the checkpoint is drawn, whatever the replay of the skipped batches drew.

    It also repairs what AllenNLP's trainer loses when a run is killed between an epoch's
    checkpoint and the `best.th` it writes just after it (or resumed from the first epoch's, which
    records no `best.th` yet): resumed from the checkpoint of an epoch that was the best so far,
    it writes `best.th` from the restored weights, so the run ends with, and is tested with, the
    best weights as an uninterrupted one would be.

    And resumed after the run's last epoch (a run killed while `model.tar.gz` was written, or
    recovered again), it gives back the finished run's metrics (from `metrics.json`, else the
    last epoch's file) where the trainer, having trained nothing, has only `best_*` ones, so
    `--recover` no longer rewrites `metrics.json` with those alone.

    Single-process training only: in distributed training each worker has its own generators
    and the trainer saves the primary's, so there it restores nothing (and logs why).

    Registered as a `TrainerCallback` with name "exact_resume".

    # Parameters

    serialization_dir : `str`
        The run's directory (given by the trainer).
    """

    def __init__(self, serialization_dir: str) -> None:
        super().__init__(serialization_dir)
        self.epoch_start: Optional[RandomStates] = None
        self.saved: Optional[Dict[str, Any]] = None

    @overrides
    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        if trainer._distributed and self.saved is not None:
            logger.warning("exact_resume: distributed training, random states not restored")
            self.saved = None
        trainer.data_loader = _ResumingDataLoader(trainer.data_loader, self, trainer)
        resumed_at_epoch_end = (
            self.saved is not None and trainer._start_after_batches_in_epoch_completed == 0
        )
        if resumed_at_epoch_end and trainer._metric_tracker.is_best_so_far() and is_primary:
            best = os.path.join(trainer._serialization_dir, "best.th")
            save_atomically(trainer.model.state_dict(), best)
            trainer._best_model_filename = best

    @overrides
    def on_end(
        self,
        trainer,
        metrics: Optional[Dict[str, Any]] = None,
        epoch: Optional[int] = None,
        is_primary: bool = True,
        **kwargs,
    ) -> None:
        resumed = trainer._start_after_epochs_completed
        if metrics is None or not is_primary or resumed == 0 or trainer._epochs_completed > resumed:
            return
        # Resumed after its last epoch: the trainer trained nothing and returns only the
        # best_* metrics, which `allennlp train` would write over the finished run's.
        finished = _finished_metrics(trainer._serialization_dir, resumed - 1)
        for key, value in finished.items():
            metrics.setdefault(key, value)

    @overrides
    def state_dict(self) -> Dict[str, Any]:
        return {"epoch_start": self.epoch_start, "checkpoint": random_states.capture()}

    @overrides
    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.saved = state_dict or None


def _finished_metrics(serialization_dir: str, last_epoch: int) -> Dict[str, Any]:
    """The metrics the finished run wrote (metrics.json, else its last epoch's), or {}."""
    for name in ("metrics.json", f"metrics_epoch_{last_epoch}.json"):
        try:
            with open(os.path.join(serialization_dir, name), encoding="utf-8") as handle:
                found = json.load(handle)
        except (OSError, ValueError):
            continue
        if isinstance(found, dict):
            return found
    return {}


class _ResumingDataLoader:
    """The trainer's data loader, through which `ExactResume` sees each epoch begin and each
    batch be drawn; everything else is the wrapped loader's."""

    def __init__(self, data_loader: DataLoader, callback: ExactResume, trainer) -> None:
        self._data_loader, self._callback, self._trainer = data_loader, callback, trainer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._data_loader, name)

    def __len__(self) -> int:
        return len(self._data_loader)

    def __iter__(self) -> Iterator[TensorDict]:
        trainer = self._trainer
        # The random states saved with the checkpoint, in the epoch that resumes from it only.
        resuming = trainer._epochs_completed == trainer._start_after_epochs_completed
        saved = self._callback.saved if resuming else None
        # The index of the first batch trained after the checkpoint.
        first = (
            trainer._start_after_batches_in_epoch_completed
            * trainer._num_gradient_accumulation_steps
        )
        if saved is not None:
            self._callback.saved = None
            random_states.restore(saved["checkpoint"] if first == 0 else saved["epoch_start"])
        self._callback.epoch_start = random_states.capture()
        batches = iter(self._data_loader)
        index = 0
        while True:
            if saved is not None and index == first and first > 0:
                random_states.restore(saved["checkpoint"])
            try:
                batch = next(batches)
            except StopIteration:
                return
            yield batch
            index += 1
