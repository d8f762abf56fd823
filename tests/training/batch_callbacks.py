"""What the tests' trainer callbacks share: AllenNLP's `on_batch` signature, written once, and
an interruption that happens once in a run that is resumed."""

import os
from pathlib import Path

from allennlp.training.callbacks import TrainerCallback


class TrainedBatchCallback(TrainerCallback):
    """A `TrainerCallback` whose `on_trained_batch` sees each training batch (not the
    validation ones)."""

    def on_batch(
        self,
        trainer,
        batch_inputs,
        batch_outputs,
        batch_metrics,
        epoch,
        batch_number,
        is_training,
        is_primary=True,
        batch_grad_norm=None,
        **kwargs,
    ) -> None:
        if is_training:
            self.on_trained_batch(trainer, batch_inputs, batch_outputs, epoch, batch_number)

    def on_trained_batch(self, trainer, batch_inputs, batch_outputs, epoch, batch_number) -> None:
        raise NotImplementedError


def interrupt_once_at(log: str, count: int, marker: str) -> None:
    """Raises KeyboardInterrupt (what Ctrl-C raises) when `log` has `count` lines, once: the
    `marker` file remembers it across the resumed run. A `count` of 0 or no `marker` never
    interrupts."""
    if count and marker and not os.path.exists(marker) and _lines(log) == count:
        Path(marker).touch()
        raise KeyboardInterrupt


def _lines(path: str) -> int:
    with open(path) as lines:
        return sum(1 for _ in lines)
