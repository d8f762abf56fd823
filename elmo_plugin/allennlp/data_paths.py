"""
Where the packaged configs read their data: under the folder a user names in the environment
variable `ELMO_PLUGIN_DATA` (training_configs/common/data.libsonnet reads it with
`std.extVar`; AllenNLP passes the environment to jsonnet as external variables), or in the
files a user names with `-o` overrides. Never a folder the user did not name.

jsonnet has no default for an undefined external variable, so every evaluation through
`allennlp.common.params` (`elmo_plugin.allennlp.config_imports` wraps it) gives the variable: its
value in the environment, else `UNSET`, which the data paths then start with. A reader refuses
such a path (`check_data_named`) with an error that names the variable, the overrides and the
files expected.
"""

import json
import os
from typing import Dict, List, Mapping, Optional

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import configs_directory

DATA_VARIABLE = "ELMO_PLUGIN_DATA"
# What the variable is in a config when nobody set it: the data paths start with it.
UNSET = "$" + DATA_VARIABLE
DATA_BLOCK = os.path.join("common", "data.libsonnet")
# A data set's files in data.libsonnet, in the order a user reads them.
SPLITS = ("train", "dev", "test")
# How a user names their own data for a task config (README "Configs").
DATA_OVERRIDES = (
    '-o \'{"train_data_path": "...", "validation_data_path": "...", "test_data_path": "..."}\''
)


def with_data_variable(ext_vars: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """`ext_vars` with `DATA_VARIABLE` given: theirs, else the environment's, else `UNSET`."""
    given = dict(ext_vars or {})
    given[DATA_VARIABLE] = given.get(DATA_VARIABLE) or os.environ.get(DATA_VARIABLE) or UNSET
    return given


def data_files(root: str) -> Dict[str, Dict[str, str]]:
    """Each data set of the packaged configs (data.libsonnet) and its files under `root`."""
    from allennlp.common import params

    path = os.path.join(configs_directory(), DATA_BLOCK)
    files = json.loads(params.evaluate_file(path, ext_vars={DATA_VARIABLE: root}))
    files.pop("root", None)
    return files


def expected_files(file_path: str) -> List[str]:
    """The files of the packaged configs' data set that `file_path` belongs to (all its
    splits), relative to the data folder; empty when it is none of theirs."""
    root = UNSET if file_path.startswith(UNSET + "/") else os.environ.get(DATA_VARIABLE, "")
    if not root:
        return []
    prefix = root.rstrip("/") + "/"
    for files in data_files(root).values():
        if file_path in files.values():
            return [files[split][len(prefix) :] for split in SPLITS if split in files]
    return []


def check_data_named(file_path: str) -> None:
    """A `ConfigurationError` for a packaged config's data path when `DATA_VARIABLE` was not
    set: what to set, what to override, and the files expected."""
    if not file_path.startswith(UNSET + "/"):
        return
    expected = expected_files(file_path) or [file_path[len(UNSET) + 1 :]]
    raise ConfigurationError(
        f"{file_path}: no data folder named. The packaged configs read their data under the "
        f"folder in the environment variable {DATA_VARIABLE} "
        f"(export {DATA_VARIABLE}=/path/to/data), which is not set; this data set's files "
        f"there: {', '.join(expected)}. Or name the "
        f"files with {DATA_OVERRIDES} (`allennlp train`)"
    )
