from typing import Any

import torch
from allennlp.training.checkpointer import Checkpointer
from overrides import overrides

from elmo_plugin.elmo.files.atomic_files import replaced_when_complete


@Checkpointer.register("atomic")
class AtomicCheckpointer(Checkpointer):
    """
    AllenNLP's `Checkpointer` (same parameters, same file names, same pruning), each file
    written to a temporary name beside it and renamed onto its name once complete, so that a
    crash or a kill while writing leaves every earlier checkpoint, and `best.th`, as they were.

    The training state is written before the model state: a model state file is what marks a
    checkpoint as there (`find_latest_checkpoint` looks for it), so `--recover` never finds one
    without the other. Files are only ever replaced, never rewritten in place, so `best.th`,
    which the trainer makes a hard link to the model state of the epoch's checkpoint, cannot be
    damaged through that link.

    Registered as a `Checkpointer` with name "atomic".
    """

    @overrides
    def save_checkpoint(self, trainer) -> None:
        state = trainer.get_checkpoint_state() if self._serialization_dir is not None else None
        if state is not None:
            point = (
                state.trainer_state["epochs_completed"],
                state.trainer_state["batches_in_epoch_completed"],
            )
            save_atomically(state.trainer_state, self._training_state_path(*point))
            save_atomically(state.model_state, self._model_state_path(*point))
        # Finds both files there, so writes nothing: the bookkeeping and the pruning.
        super().save_checkpoint(trainer)


def save_atomically(value: Any, path: str) -> None:
    """`torch.save(value, path)`, through a temporary file renamed onto `path`."""
    with replaced_when_complete(path) as partial:
        torch.save(value, partial)
