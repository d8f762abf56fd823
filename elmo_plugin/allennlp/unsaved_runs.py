"""
A training run that fails before it saved anything leaves no serialization folder: AllenNLP's
`train_model` creates it first thing (config.json, meta.json, out.log), so the same command,
its mistake fixed, would be refused with "already exists" and the user left to delete it.

Removed only what the failed run made: the folder if it did not exist before the run (with
the parents made for it), its contents if it existed empty; never a folder that had anything in
it before (`--recover`, a user's files), never once a checkpoint, an epoch's metrics or an
archive is in it (the run can be recovered from those). The error itself then ends the
command on one line: AllenNLP's `train_model` installs its own `sys.excepthook` (which logs
every error with its traceback), so the command's one-line hook is installed again over it.
"""

import functools
import logging
import os
import shutil
from typing import Any, Callable, List, Optional

from allennlp.common import Params

logger = logging.getLogger(__name__)

# What a run saves that `--recover` continues from or a user keeps: checkpoints and `best.th`
# (`*.th`), each epoch's metrics, the archive.
SAVED_PREFIXES = ("metrics_epoch_", "model.tar.gz")
SAVED_SUFFIX = ".th"


def removing_unsaved_run(train_model: Callable[..., Any]) -> Callable[..., Any]:
    """`allennlp.commands.train.train_model`, removing the folder a run made when it fails
    before saving anything."""

    @functools.wraps(train_model)
    def removing(params: Params, serialization_dir: str, *args: Any, **kwargs: Any) -> Any:
        before = _entries(serialization_dir)
        made = _first_missing(serialization_dir)
        try:
            return train_model(params, serialization_dir, *args, **kwargs)
        except BaseException:
            if not before:  # no folder, or an empty one
                _remove_unsaved(serialization_dir, made)
            _one_line_errors_again()
            raise

    return removing


def saved_anything(serialization_dir: str) -> bool:
    return any(
        name.endswith(SAVED_SUFFIX) or name.startswith(SAVED_PREFIXES)
        for name in _entries(serialization_dir) or []
    )


def _remove_unsaved(serialization_dir: str, made: Optional[str]) -> None:
    """Removes what the run put in `serialization_dir`, and the folders it made up to `made`
    (the highest of them, None if the folder existed)."""
    entries = _entries(serialization_dir)
    if entries is None or saved_anything(serialization_dir):
        return
    logger.info("removing %s: the run failed before it saved anything", serialization_dir)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        return
    for name in entries:
        path = os.path.join(serialization_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.remove(path)


def _first_missing(folder: str) -> Optional[str]:
    """The highest of `folder` and its parents that does not exist (which `os.makedirs` would
    make), or None when `folder` exists."""
    missing = None
    path = os.path.abspath(folder)
    while not os.path.exists(path):
        missing, path = path, os.path.dirname(path)
    return missing


def _entries(folder: str) -> Optional[List[str]]:
    """The names in `folder`, or None when there is no such folder."""
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else None


def _one_line_errors_again() -> None:
    from elmo_plugin.allennlp.framework import COMMAND, install

    install(COMMAND)  # idempotent: only the excepthook AllenNLP replaced is wrapped again
