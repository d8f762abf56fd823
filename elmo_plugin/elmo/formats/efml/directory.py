"""
The files of an ELMoForManyLangs (EFML) model directory, read as EFML's `Embedder` reads them:
`config.json` (a dump of the training arguments, whose `config_path` names the architecture
JSON), `char.dic` and `word.dic` (`token<TAB>id` lines) and the two torch state dicts
`token_embedder.pkl` and `encoder.pkl`; the directory on disk or inside a ZIP archive
(`zip_archives`: NLPL's repository publishes EFML models as ZIPs), read in place.
"""

import io
import json
import os
from typing import Any, Dict, List, Optional

import torch

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.restricted_pickle import load_tensors
from elmo_plugin.elmo.files.zip_archives import is_file, is_folder, open_file
from elmo_plugin.elmo.formats.naming.bilm_formats import EFML_FILES

# What marks a directory as an EFML model (naming tells the formats apart by it), each file by
# its part; `word.dic` only where the model has a word embedding.
REQUIRED_FILES = EFML_FILES
TRAINING_ARGUMENTS, CHARACTER_TABLE, TOKEN_EMBEDDER_WEIGHTS, ENCODER_WEIGHTS = EFML_FILES
WORD_TABLE = "word.dic"
DESCRIPTION = (
    "an ELMoForManyLangs model directory: "
    + ", ".join(REQUIRED_FILES)
    + f" (and {WORD_TABLE} for a model with word embeddings)"
)
# EFML's packaged architecture JSONs (`elmoformanylangs/configs/`, MIT, copied unchanged with
# its LICENSE), where EFML itself looks last: the published models' `config_path` names one of
# them by a path on the authors' machine.
PACKAGED_CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs")
# A table line that strips to one field held a whitespace token, which EFML reads as U+3000
# (the ideographic space of its Chinese models; `str.strip` removed it on writing).
STRIPPED_TOKEN = "\u3000"


def is_efml_directory(path: "str | os.PathLike[str]") -> bool:
    """Whether `path` is a directory (on disk or in a ZIP) holding the files of an EFML model
    (`REQUIRED_FILES`)."""
    folder = os.fspath(path)
    return is_folder(folder) and all(is_file(os.path.join(folder, name)) for name in REQUIRED_FILES)


def missing_files(path: str) -> List[str]:
    """The `REQUIRED_FILES` that `path` lacks."""
    return [name for name in REQUIRED_FILES if not is_file(os.path.join(path, name))]


def read_architecture(model_dir: str, efml_configs_dir: Optional[str] = None) -> Dict[str, Any]:
    """
    The architecture JSON of the model in `model_dir`, found as EFML's `Embedder` finds it:
    `config_path` from `config.json` (relative to the model directory, or absolute), then its
    file name in the model directory, then in EFML's packaged `configs/` (`efml_configs_dir`,
    where EFML is installed), then in the copy of those configs shipped here (`PACKAGED_CONFIGS`:
    the models NLPL publishes need them, as they do with EFML).
    """
    arguments = _read_json(os.path.join(model_dir, TRAINING_ARGUMENTS))
    config_path = arguments.get("config_path")
    if not isinstance(config_path, str):
        raise ConfigurationError(
            f"{os.path.join(model_dir, TRAINING_ARGUMENTS)} has no string 'config_path' "
            "(the path of the model's architecture JSON, as EFML's training writes it)"
        )
    tried = architecture_candidates(model_dir, config_path, efml_configs_dir)
    for candidate in tried:
        if is_file(candidate):
            return _read_json(candidate)
    raise ConfigurationError(
        f"the architecture JSON of the ELMoForManyLangs model {model_dir} ('config_path': "
        f"{config_path!r} in its {TRAINING_ARGUMENTS}) is in none of: {', '.join(tried)}. "
        "Copy the JSON into the model directory (EFML's packaged configs are "
        "cnn_50_100_512_4096_sample.json and cnn_0_100_512_4096_sample.json)"
    )


def architecture_candidates(
    model_dir: str, config_path: str, efml_configs_dir: Optional[str] = None
) -> List[str]:
    """Where EFML looks for the architecture JSON, in its order."""
    given = os.path.join(model_dir, config_path)
    name = os.path.basename(config_path)
    candidates = [given, os.path.join(model_dir, name)]
    if efml_configs_dir is not None:
        candidates.append(os.path.join(efml_configs_dir, name))
    candidates.append(os.path.join(PACKAGED_CONFIGS, name))
    return list(dict.fromkeys(candidates))


def read_table(path: str) -> Dict[str, int]:
    """A `char.dic` or `word.dic`: token to id, each line `token<TAB>id`, as EFML reads it
    (a line that strips to one field is `STRIPPED_TOKEN`)."""
    table: Dict[str, int] = {}
    try:
        with io.TextIOWrapper(open_file(path), encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                fields = line.strip().split("\t")
                if len(fields) == 1:
                    fields.insert(0, STRIPPED_TOKEN)
                if len(fields) != 2 or not fields[1].isdigit():
                    raise ConfigurationError(
                        f"{path}, line {number}: expected 'token<TAB>id', got {line.rstrip()!r}"
                    )
                table[fields[0]] = int(fields[1])
    except UnicodeDecodeError as error:
        raise ConfigurationError(
            f"{path}: not UTF-8 text ({error.reason}); expected 'token<TAB>id' lines in "
            "UTF-8, as EFML writes them"
        ) from error
    return table


def read_state_dict(path: str) -> Dict[str, torch.Tensor]:
    """A torch state dict of tensors (EFML's `.pkl` files), on the CPU, unpickled with nothing
    but tensors allowed (`restricted_pickle`): a model folder may come from anyone."""
    try:
        with open_file(path) as handle:
            state = load_tensors(handle, path)
    except ConfigurationError:
        raise
    except Exception as error:  # torch raises many kinds for a file that is not its own
        raise ConfigurationError(
            f"{path} is not a torch state dict of an ELMoForManyLangs model: {error}"
        ) from error
    if not isinstance(state, dict) or not all(
        isinstance(value, torch.Tensor) for value in state.values()
    ):
        raise ConfigurationError(f"{path} is not a torch state dict (names to tensors)")
    return state


def _read_json(path: str) -> Dict[str, Any]:
    try:
        with open_file(path) as json_file:
            value = json.load(json_file)
    except json.JSONDecodeError as error:
        raise ConfigurationError(f"{path} is not JSON: {error}") from error
    if not isinstance(value, dict):
        raise ConfigurationError(f"{path} holds {type(value).__name__}, expected a JSON object")
    return value
