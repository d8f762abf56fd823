"""
The softmax of a `bilm` model in files beside a bilm-tf export, so that the export can be
trained further: `vocab.txt` (bilm-tf's vocabulary format, one word per line, `<UNK>` for
the unknown word) and `softmax.hdf5` with `softmax/W` `(words, dim)` and `softmax/b`
`(words,)`, row `i` belonging to line `i`. `softmax/W` may be stored in 16 bits; it is read
back as float32.
"""

import os
from typing import Callable, Dict, List, Optional, Tuple

import h5py
import numpy
from allennlp.data.vocabulary import DEFAULT_OOV_TOKEN

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import require_space
from elmo_plugin.elmo.formats.naming.package_files import local_file
from elmo_plugin.allennlp.lm.corpus import BILM_TF_UNKNOWN

SOFTMAX_NAME = "softmax.hdf5"
VOCAB_NAME = "vocab.txt"


def softmax_files(
    words: List[str], weight: numpy.ndarray, bias: numpy.ndarray
) -> Dict[str, Callable[[str], None]]:
    """The writers of `vocab.txt` and `softmax.hdf5`, by name, for `save_bilm`'s `more_files`
    (which replaces them together with the biLM's files)."""
    if len(words) != weight.shape[0] or len(words) != bias.shape[0]:
        raise ValueError(f"{len(words)} words for a softmax of {weight.shape[0]} rows")

    def write_vocabulary(path: str) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            for word in words:
                handle.write((BILM_TF_UNKNOWN if word == DEFAULT_OOV_TOKEN else word) + "\n")

    def write_weights(path: str) -> None:
        require_space(path, weight.nbytes + bias.nbytes)
        with h5py.File(path, "w") as handle:
            handle["softmax/W"] = weight
            handle["softmax/b"] = bias

    return {SOFTMAX_NAME: write_weights, VOCAB_NAME: write_vocabulary}


def read_softmax(
    softmax_file: str, vocab_file: Optional[str] = None
) -> Tuple[List[str], numpy.ndarray, numpy.ndarray]:
    """The words (`<UNK>` read as `@@UNKNOWN@@`), weights and biases of an exported softmax.
    Raises a `ConfigurationError` when the vocabulary does not belong to the softmax."""
    path = _existing(softmax_file)
    if vocab_file is None:
        vocab_file = os.path.join(os.path.dirname(path), VOCAB_NAME)
    with open(_existing(vocab_file), encoding="utf-8") as handle:
        words = [line.rstrip("\n") for line in handle]
    words = [DEFAULT_OOV_TOKEN if word == BILM_TF_UNKNOWN else word for word in words]
    try:
        with h5py.File(path, "r") as handle:
            weight = handle["softmax/W"][...].astype(numpy.float32)
            bias = handle["softmax/b"][...].astype(numpy.float32)
    except (OSError, KeyError) as error:
        raise ConfigurationError(
            f"{softmax_file}: not a softmax written by `allennlp elmo-export` ({error})"
        ) from error
    if weight.ndim != 2 or bias.shape != (weight.shape[0],):
        raise ConfigurationError(
            f"{softmax_file}: softmax/W {weight.shape} and softmax/b {bias.shape} do not fit"
        )
    if len(words) != weight.shape[0]:
        raise ConfigurationError(
            f"{vocab_file} has {len(words)} words but the softmax in {softmax_file} has "
            f"{weight.shape[0]} rows: the vocabulary does not belong to this softmax"
        )
    return words, weight, bias


def _existing(path: str) -> str:
    return local_file(path, "softmax file")
