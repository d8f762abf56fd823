"""
bilm-tf's training checkpoints as biLMs: the folder `train()` writes (`checkpoint`, naming the
latest `model.ckpt-N` by an absolute path of the machine it was trained on; `model.ckpt-N.index`
and `.data-*`; `options.json`) and the vocabulary it was trained with, or one `model.ckpt-N`
named as a path. The biLM's tensors are read under their hdf5 names, as bilm-tf's
`dump_weights` would write them; the softmax (`lm/softmax/W`, `lm/softmax/b`), which
`dump_weights` leaves out, is read on its own (`read_softmax`).
"""

import logging
import os
import re
from typing import Any, Dict, List, Optional, Tuple

import numpy
import torch

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.execution.settings import Execution
from elmo_plugin.elmo.formats.bilm_tf import checked_weight, copy_weights
from elmo_plugin.elmo.formats.bilm_tf_options import read_options
from elmo_plugin.elmo.formats.naming.bilm_formats import (
    BILM_FOLDER_FORMATS,
    CHECKPOINT_STATE_NAME,
    INDEX_SUFFIX,
    OPTIONS_NAME,
    TF_CHECKPOINT,
    is_checkpoint_prefix,
)
from elmo_plugin.elmo.formats.tensorflow.checkpoint import Checkpoint
from elmo_plugin.elmo.files.zip_archives import is_file, is_folder, list_folder, open_file

logger = logging.getLogger(__name__)

REQUIRED_FILES = BILM_FOLDER_FORMATS[TF_CHECKPOINT]
SOFTMAX_WEIGHT, SOFTMAX_BIAS = "lm/softmax/W", "lm/softmax/b"
_SCOPE = "lm/"
# A biLM variable of the training graph, and how `dump_weights` renames it.
_BILM_VARIABLE = re.compile(
    r"^lm/(char_embed|CNN(_high_\d+|_proj)?/\w+"
    r"|RNN_\d+/rnn/multi_rnn_cell/cell_\d+/lstm_cell/(kernel|bias|projection/kernel))$"
)
_LSTM_RENAMES = (
    ("/rnn/multi_rnn_cell/cell_", "/RNN/MultiRNNCell/Cell"),
    ("/lstm_cell/projection/kernel", "/LSTMCell/W_P_0"),
    ("/lstm_cell/kernel", "/LSTMCell/W_0"),
    ("/lstm_cell/bias", "/LSTMCell/B"),
)
_STATE_LINE = re.compile(r'^\s*(model_checkpoint_path|all_model_checkpoint_paths)\s*:\s*"(.*)"\s*$')


def is_checkpoint(name: str) -> bool:
    """Whether `name` is a training checkpoint: a folder holding `REQUIRED_FILES`, or one
    checkpoint's prefix."""
    if is_checkpoint_prefix(name):
        return True
    return is_folder(name) and all(is_file(f"{name}/{file}") for file in REQUIRED_FILES)


def hdf5_name(variable: str) -> str:
    """The name bilm-tf's `dump_weights` gives the training graph's `variable`."""
    name = variable[len(_SCOPE) :]
    for theirs, ours in _LSTM_RENAMES:
        name = name.replace(theirs, ours)
    return name


def checkpoint_prefix(folder: str) -> str:
    """The checkpoint of `folder` that its `checkpoint` file names latest, found by its base
    name: the file holds absolute paths of the machine it was trained on."""
    state = f"{folder}/{CHECKPOINT_STATE_NAME}"
    with open_file(state) as handle:
        text = handle.read().decode("utf-8", errors="replace")
    named = {key: value for key, value in _state_entries(text, state)}
    if "model_checkpoint_path" not in named:
        raise ConfigurationError(
            f'{state}, expected a line model_checkpoint_path: "..." (TensorFlow\'s list of '
            "the folder's checkpoints)"
        )
    base = named["model_checkpoint_path"].replace("\\", "/").rstrip("/").split("/")[-1]
    prefix = f"{folder}/{base}"
    if not is_checkpoint_prefix(prefix):
        present = sorted(
            name[: -len(INDEX_SUFFIX)]
            for name in list_folder(folder)
            if name.endswith(INDEX_SUFFIX)
        )
        raise MissingFileError(
            f"{state} names {named['model_checkpoint_path']!r} latest, but {folder} has no "
            f"{base}{INDEX_SUFFIX}; the folder holds the checkpoints {present or 'none'}: name "
            f"one as {folder}/<name>"
        )
    return prefix


def _state_entries(text: str, state: str) -> List[Tuple[str, str]]:
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _STATE_LINE.match(line)
        if match is None:
            raise ConfigurationError(
                f'{state}, line {number}: expected model_checkpoint_path: "..." or '
                f'all_model_checkpoint_paths: "...", got {line[:100]!r}'
            )
        entries.append((match.group(1), match.group(2)))
    return entries


def locate(name: str) -> Tuple[str, str]:
    """The folder and the checkpoint prefix of `name`: a checkpoint folder (its latest
    checkpoint) or one checkpoint's prefix (its folder is the one it is in)."""
    if is_folder(name):
        folder = name.rstrip("/")
        return folder, checkpoint_prefix(folder)
    return os.path.dirname(name) or ".", name


class CheckpointWeights:
    """The biLM tensors of a training checkpoint, under bilm-tf's hdf5 names (`WeightSource`);
    the softmax and the optimizer's slots are not among them."""

    def __init__(self, checkpoint: Checkpoint) -> None:
        self.checkpoint = checkpoint
        self.weight_file = checkpoint.prefix
        self._variables = {
            hdf5_name(name): name for name in checkpoint.names() if _BILM_VARIABLE.match(name)
        }

    def names(self) -> List[str]:
        return sorted(self._variables)

    def rows(self, name: str) -> Optional[int]:
        if name not in self._variables:
            return None
        shape = self.checkpoint.shape(self._variables[name])
        return shape[0] if shape else None

    def read(self, name: str, expected_shape: Tuple[int, ...]) -> numpy.ndarray:
        if name not in self._variables:
            raise ConfigurationError(
                f"{self.weight_file}: the checkpoint holds no biLM variable for bilm-tf's "
                f"{name!r} (its biLM variables are under '{_SCOPE}')"
            )
        value = numpy.array(self.checkpoint.tensor(self._variables[name]))
        return checked_weight(value, self.weight_file, self._variables[name], expected_shape)


def checkpoint_options(folder: str) -> Dict[str, Any]:
    """The options that the checkpoints of `folder` were trained with."""
    return read_options(f"{folder}/{OPTIONS_NAME}")


def load_checkpoint_bilm(
    name: str,
    stateful: bool = False,
    char_cnn_cache_size: int = 50000,
    dropout: float = 0.0,
    compute_dtype: torch.dtype = torch.float32,
    execution: Execution = Execution(),
) -> ElmoBiLm:
    """The biLM of the training checkpoint `name` (a folder or a prefix, `locate`), with the
    options it was trained with; `n_characters` 261, bilm-tf's for training, reads as bilm-tf's
    inference does: the character table gains a zero row for masked tokens."""
    folder, prefix = locate(name)
    logger.info("Loading the biLM of the training checkpoint %s", prefix)
    bilm = ElmoBiLm.from_options(
        checkpoint_options(folder),
        stateful,
        char_cnn_cache_size,
        dropout,
        compute_dtype=compute_dtype,
        execution=execution,
    )
    copy_weights(bilm, CheckpointWeights(Checkpoint(prefix)))
    return bilm


def read_softmax(name: str) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The softmax weight (vocabulary x projection) and bias of the checkpoint `name`,
    memory-mapped: the published one has a million rows."""
    _, prefix = locate(name)
    checkpoint = Checkpoint(prefix)
    for variable in (SOFTMAX_WEIGHT, SOFTMAX_BIAS):
        if variable not in checkpoint:
            raise ConfigurationError(
                f"{checkpoint.index_file}: the checkpoint has no softmax ({variable}); it is "
                "not a bilm-tf training checkpoint, or one written without its softmax"
            )
    weight, bias = checkpoint.tensor(SOFTMAX_WEIGHT), checkpoint.tensor(SOFTMAX_BIAS)
    if weight.ndim != 2 or bias.shape != weight.shape[:1]:
        raise ConfigurationError(
            f"{checkpoint.index_file}: softmax shapes {weight.shape} and {bias.shape} do not "
            "match (expected (vocabulary, dim) and (vocabulary,))"
        )
    return weight, bias
