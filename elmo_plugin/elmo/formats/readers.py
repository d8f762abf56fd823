"""
One reader for each biLM format naming knows (`READERS`): each takes the files a name was
resolved to (`BilmFiles`) and how to build the biLM (`BilmBuild`) and returns the loaded
`ElmoBiLm`. `load_bilm` resolves a name once and reads it through this table, so the formats
are told apart in one place, naming, and branched on in one place, here.
"""

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

import torch

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.settings import Execution
from elmo_plugin.elmo.formats.efml import load_efml_bilm
from elmo_plugin.elmo.formats.naming.bilm_formats import (
    BILM_TF,
    BILM_TF_NLPL,
    EFML,
    TF_CHECKPOINT,
    TF_HUB,
)
from elmo_plugin.elmo.formats.naming.names import BilmFiles, is_gone
from elmo_plugin.elmo.formats.options_record import (
    OptionsRecord,
    efml_model_gone,
    find_options,
    record_options,
    recorded_efml,
)
from elmo_plugin.elmo.formats.tensorflow.bilm_checkpoint import load_checkpoint_bilm
from elmo_plugin.elmo.formats.tensorflow.hub_module import load_hub_bilm
from elmo_plugin.elmo.formats.weight_provenance import read_weights_in_model


@dataclass(frozen=True)
class BilmBuild:
    """How to build a biLM whatever its format, and what is known of it besides its files:
    `load_bilm`'s parameters (which it documents), with `name` the biLM's name as given, which
    a model's vocabulary records."""

    name: str
    stateful: bool
    char_cnn_cache_size: int
    dropout: float
    compute_dtype: torch.dtype
    execution: Execution
    known_options: Dict[str, Dict[str, Any]]
    vocab: Optional[OptionsRecord]
    in_model: bool


Reader = Callable[[BilmFiles, BilmBuild], ElmoBiLm]


def read_bilm(files: BilmFiles, build: BilmBuild) -> ElmoBiLm:
    """The biLM of `files`, read by its format's reader."""
    return READERS[files.format](files, build)


def _read_bilm_tf(files: BilmFiles, build: BilmBuild) -> ElmoBiLm:
    """bilm-tf's `options.json` and weights (its weights may be missing inside a model, whose
    state dict brings them, or left out for random weights)."""
    known, vocab = build.known_options, build.vocab
    resolved = build.name not in known
    if resolved and vocab is not None and recorded_efml(vocab, build.name):
        if is_gone(files.options_file):  # the ELMoForManyLangs folder a model was trained with
            raise efml_model_gone(build.name, "the biLM's options_file")
    options = find_options(files.options_file, known, vocab)
    bilm = ElmoBiLm.from_options(
        options,
        build.stateful,
        build.char_cnn_cache_size,
        build.dropout,
        compute_dtype=build.compute_dtype,
        execution=build.execution,
    )
    if files.weight_file is not None:
        read_weights_in_model(bilm, files.weight_file, build.in_model)
    return bilm


def _read_efml(files: BilmFiles, build: BilmBuild) -> ElmoBiLm:
    """An ELMoForManyLangs model folder, recorded in a model's vocabulary so that its archive
    knows the folder it needs."""
    if build.dropout:
        raise ConfigurationError(
            f"{files.options_file}: an ELMoForManyLangs biLM has no dropout inside it (got "
            f"dropout={build.dropout}); leave it at 0"
        )
    bilm = load_efml_bilm(
        files.options_file,
        build.stateful,
        build.char_cnn_cache_size,
        build.compute_dtype,
        build.execution,
    )
    if build.vocab is not None:
        record_options(build.vocab, build.name, bilm.options())
    return bilm


def _read_tensorflow(load: Callable[..., ElmoBiLm]) -> Reader:
    """A reader of a TensorFlow folder (a training checkpoint or a Hub module) by `load`."""

    def read(files: BilmFiles, build: BilmBuild) -> ElmoBiLm:
        return load(
            files.options_file,
            build.stateful,
            build.char_cnn_cache_size,
            build.dropout,
            build.compute_dtype,
            build.execution,
        )

    return read


# Every format naming resolves a name to (`BilmFiles.format`), and its reader; a ZIP or a
# `.tar.gz` holding one is read as the format inside it.
READERS: Dict[str, Reader] = {
    BILM_TF: _read_bilm_tf,
    BILM_TF_NLPL: _read_bilm_tf,
    EFML: _read_efml,
    TF_CHECKPOINT: _read_tensorflow(load_checkpoint_bilm),
    TF_HUB: _read_tensorflow(load_hub_bilm),
}
