"""
Exact `--recover`: the trainer `exact_resume_gradient_descent`, and `exact_resume`, the callback
it replaces, kept as a deprecated alias for configs that name it.

Line numbers below are those of AllenNLP 2.10.1's `allennlp/training/gradient_descent_trainer.py`,
the last AllenNLP release.
"""

import json
import logging
import os
from typing import Any, Dict, Iterator, List, Optional

import torch
from allennlp.data import DataLoader, Instance, TensorDict, Vocabulary
from allennlp.models import Model
from allennlp.training import GradientDescentTrainer, Trainer
from allennlp.training.callbacks import TrainerCallback
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.training import random_states
from elmo_plugin.allennlp.training.atomic_checkpointer import save_atomically
from elmo_plugin.allennlp.training.gradient_settings import check_gradient_settings
from elmo_plugin.allennlp.training.random_states import RandomStates

logger = logging.getLogger(__name__)


@Trainer.register("exact_resume_gradient_descent", constructor="from_partial_objects")
class ExactResumeTrainer(GradientDescentTrainer):
    """
    AllenNLP's `gradient_descent` trainer whose runs resumed with `allennlp train --recover`
    continue exactly as the interrupted run did: the same data order and the same dropout
    masks, sampled-softmax samples and any other random draws, so that they end with the same
    weights and metrics, bit for bit. Every shipped config trains with it (the biLM paper
    configs with `sparse_gradient_descent`, its subclass).

    AllenNLP's trainer restores the model, optimizer and counters of a checkpoint and replays
    the data loader up to it, but draws every random number afresh from the config's seeds.
    This one adds to each checkpoint the states of Python's, NumPy's and torch's (CPU and CUDA)
    random generators at two moments: when the epoch in progress started (before its data
    loader drew anything, which fixes the epoch's order) and at the checkpoint itself. On
    `--recover` it sets the first back when the resumed epoch starts and the second just before
    the first batch after the checkpoint is drawn, whatever the replay of the skipped batches
    drew.

    It also repairs what AllenNLP's trainer loses when a run is killed between an epoch's
    checkpoint and the `best.th` it writes just after it (lines 887 and 895-930), or resumed
    from the first epoch's checkpoint, which records no `best.th` yet: resumed from the
    checkpoint of an epoch that was the best so far, it writes `best.th` from the restored
    weights, so the run ends with, and is tested with, the best weights as an uninterrupted
    one would be.

    And resumed after the run's last epoch (a run killed while `model.tar.gz` was written, or
    recovered again), it gives back the finished run's metrics (from `metrics.json`, else the
    last epoch's file) where AllenNLP's trainer, having trained nothing, has only `best_*`
    ones, so `--recover` no longer rewrites `metrics.json` with those alone.

    Single-process training only: in distributed training each worker has its own generators
    and the trainer saves the primary's, so there it restores nothing (and logs why).

    How, with AllenNLP's public hooks where it has them:

    - The random states go into each checkpoint, and come back from it, as the state of a
      `TrainerCallback` of the trainer's own (`state_dict` and `load_state_dict`, lines 1020
      and 1074), given to AllenNLP's constructor through its `callbacks` parameter after the
      config's callbacks; its `on_start`, which AllenNLP calls right after restoring a
      checkpoint (line 763), repairs `best.th`.
    - `train()` (public, line 747) is extended to give back a finished run's metrics.
    - `_train_epoch()` (protected, line 423) is the one protected method overridden (besides
      the constructor and `train()`, both public): AllenNLP calls nothing between the start of
      an epoch and its data loader's first batch, nor between the batches it skips (lines 447
      and 477-483: draw, count, `continue`), so no hook can set the states back there. It sets
      the epoch's states, then runs AllenNLP's `_train_epoch`; for the one epoch resumed in its
      middle it runs it on the data loader's batches through a generator that sets the
      checkpoint's states back before drawing the first batch after the checkpoint
      (`self.data_loader` is the configured loader again once the epoch ends, and at all times
      in a run that is not resumed).

    It reads these attributes of AllenNLP's trainer, which has no public accessor for them:
    `_start_after_epochs_completed` and `_start_after_batches_in_epoch_completed` (the resume
    point, restored at lines 1084-1085), `_num_gradient_accumulation_steps` (batches a step),
    `_distributed`, `_metric_tracker` (whether the restored epoch was the best so far) and
    `_serialization_dir`; and it writes one, `_best_model_filename`, after repairing `best.th`,
    as line 908 would have set it.

    Registered as a `Trainer` with name "exact_resume_gradient_descent".

    # Parameters

    Those of AllenNLP's `GradientDescentTrainer`, all but `model`, `optimizer` and
    `data_loader` by keyword.
    """

    def __init__(
        self,
        model: Model,
        optimizer: torch.optim.Optimizer,
        data_loader: DataLoader,
        *,
        callbacks: Optional[List[TrainerCallback]] = None,
        **kwargs: Any,
    ) -> None:
        check_gradient_settings(kwargs.get("grad_norm", False), kwargs.get("grad_clipping"))
        self._random_states = _RandomStates()
        callbacks = [*(callbacks or []), self._random_states]
        super().__init__(model, optimizer, data_loader, callbacks=callbacks, **kwargs)

    @overrides
    def train(self) -> Dict[str, Any]:
        metrics = super().train()
        resumed = self._start_after_epochs_completed
        if resumed > 0 and "epoch" not in metrics:
            # Resumed after its last epoch: the trainer trained nothing and returns only the
            # best_* metrics (lines 787-789), which `allennlp train` would write over the
            # finished run's.
            for key, value in _finished_metrics(self._serialization_dir, resumed - 1).items():
                metrics.setdefault(key, value)
        return metrics

    @overrides
    def _train_epoch(self, epoch: int) -> Dict[str, float]:
        # `epoch` is the number of epochs completed (line 791): the random states saved with
        # the checkpoint are for the epoch that resumes from it only.
        saved = self._random_states.saved if epoch == self._start_after_epochs_completed else None
        # The index of the first batch trained after the checkpoint.
        first = self._start_after_batches_in_epoch_completed * self._num_gradient_accumulation_steps
        if saved is not None:
            self._random_states.saved = None
            random_states.restore(saved["checkpoint"] if first == 0 else saved["epoch_start"])
        # Nothing draws a random number between here and the data loader's first batch (lines
        # 427-447: logging, memory peaks, the regularization penalty, `train()`, `iter`, `len`).
        self._random_states.epoch_start = random_states.capture()
        if saved is None or first == 0:
            return super()._train_epoch(epoch)
        data_loader = self.data_loader
        self.data_loader = _RestoringBeforeBatch(data_loader, first, saved["checkpoint"])
        try:
            return super()._train_epoch(epoch)
        finally:
            self.data_loader = data_loader

    def _prepare_resume(self) -> None:
        """After AllenNLP restored a checkpoint, if any (`_RandomStates.on_start`)."""
        if self._distributed:
            if self._random_states.saved is not None:
                logger.warning(
                    "exact resume: distributed training, random states not restored (each "
                    "worker has its own and the checkpoint holds the primary's)"
                )
            self._random_states.saved = None
            return
        resumed_at_epoch_end = (
            self._start_after_epochs_completed > 0
            and self._start_after_batches_in_epoch_completed == 0
        )
        if resumed_at_epoch_end and self._metric_tracker.is_best_so_far():
            best = os.path.join(self._serialization_dir, "best.th")
            save_atomically(self.model.state_dict(), best)
            self._best_model_filename = best


class _RandomStates(TrainerCallback):
    """The random states an `ExactResumeTrainer` keeps in each checkpoint, as the state of
    this callback of its own (AllenNLP saves and restores callbacks' states with the
    checkpoint): `epoch_start`, those of the moment the epoch in progress started; `saved`,
    those read back from the checkpoint `--recover` resumes from, until used."""

    def __init__(self) -> None:
        super().__init__(serialization_dir="")
        self.epoch_start: Optional[RandomStates] = None
        self.saved: Optional[Dict[str, Any]] = None

    @overrides
    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        super().on_start(trainer, is_primary, **kwargs)
        trainer._prepare_resume()

    @overrides
    def state_dict(self) -> Dict[str, Any]:
        # The format the `exact_resume` callback saved, so that its checkpoints resume too.
        return {"epoch_start": self.epoch_start, "checkpoint": random_states.capture()}

    @overrides
    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.saved = state_dict or None


class _RestoringBeforeBatch(DataLoader):
    """The data loader of the epoch resumed in its middle: its batches, with the random states
    of the checkpoint set back just before the first batch after it (batch `first`) is drawn.
    Everything else (`DataLoader`'s methods, any other attribute) is the wrapped loader's."""

    def __init__(self, data_loader: DataLoader, first: int, states: RandomStates) -> None:
        self._data_loader, self._first, self._states = data_loader, first, states

    def __getattr__(self, name: str) -> Any:
        return getattr(self._data_loader, name)

    def __len__(self) -> int:
        return len(self._data_loader)

    def iter_instances(self) -> Iterator[Instance]:
        return self._data_loader.iter_instances()

    def index_with(self, vocab: Vocabulary) -> None:
        self._data_loader.index_with(vocab)

    def set_target_device(self, device: torch.device) -> None:
        self._data_loader.set_target_device(device)

    def __iter__(self) -> Iterator[TensorDict]:
        batches = iter(self._data_loader)
        for _ in range(self._first):
            try:
                yield next(batches)
            except StopIteration:
                return
        random_states.restore(self._states)
        yield from batches


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


@TrainerCallback.register("exact_resume")
class ExactResume(TrainerCallback):
    """
    Deprecated: exact `--recover` is the trainer's now. Set `trainer.type` to
    "exact_resume_gradient_descent" (or "sparse_gradient_descent", which includes it) and drop
    this callback from `trainer.callbacks`.

    Kept so that configs naming it keep working with those trainers: there it does nothing
    but log that it is redundant, and hand the trainer the random states of a checkpoint
    written by the callback of earlier versions (a run started with it resumes exactly). With
    any other trainer it stops the run before training with a `ConfigurationError` saying the
    above: it cannot make that trainer's `--recover` exact, and a resumed run ending elsewhere
    than the uninterrupted one, with nothing but a log line to say so, is what it exists to
    prevent.

    Registered as a `TrainerCallback` with name "exact_resume".
    """

    def __init__(self, serialization_dir: str) -> None:
        super().__init__(serialization_dir)
        self.saved: Optional[Dict[str, Any]] = None

    @overrides
    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        super().on_start(trainer, is_primary, **kwargs)
        if not isinstance(trainer, ExactResumeTrainer):
            raise ConfigurationError(
                "The 'exact_resume' callback in trainer.callbacks is replaced by a trainer: set "
                '"trainer": {"type": "exact_resume_gradient_descent", ...} (or '
                '"sparse_gradient_descent", which includes it) and remove the callback. It '
                f"cannot make --recover exact with this trainer ({type(trainer).__name__}). A "
                "run started with the callback resumes exactly with those trainers: change "
                "its config.json the same way and pass it to --recover."
            )
        logger.warning(
            "The 'exact_resume' callback is deprecated and does nothing with trainer type "
            "'exact_resume_gradient_descent' or 'sparse_gradient_descent', which resume "
            "exactly themselves: remove it from trainer.callbacks."
        )
        # A checkpoint written by the callback of earlier versions has the states here.
        # (This callback comes before the trainer's own, which has run no hook yet.)
        if self.saved is not None and trainer._random_states.saved is None:
            trainer._random_states.saved = self.saved
        self.saved = None

    @overrides
    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.saved = state_dict or None
