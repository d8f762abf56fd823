"""
Saving a biLM as a bilm-tf export directory: `options.json` and `weights.hdf5`, with any
more files of the set (the softmax of `allennlp elmo-export --include-softmax`), replaced as
one set (`file_sets`): a reader sees the old export whole or the new one whole.
"""

import json
import os
from typing import Any, Callable, Dict, Optional

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import require_space
from elmo_plugin.elmo.formats.bilm_tf import write_weights
from elmo_plugin.elmo.formats.naming.bilm_formats import OPTIONS_NAME, WEIGHTS_NAME
from elmo_plugin.elmo.files.file_sets import replaced_together


def save_bilm(
    bilm: ElmoBiLm,
    output_dir: str,
    extra_options: Optional[Dict] = None,
    more_files: Optional[Dict[str, Callable[[str], None]]] = None,
) -> None:
    """Writes `options.json` and `weights.hdf5` (and `more_files`: a name to the function that
    writes it to a path) into `output_dir`, replaced as one set (`file_sets`)."""
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise ConfigurationError(f"output directory {output_dir} is not a directory")
    os.makedirs(output_dir, exist_ok=True)
    options = {**bilm.options(), **(extra_options or {})}
    size = sum(p.numel() * p.element_size() for p in bilm.parameters())

    def write_weight_file(path: str) -> None:
        require_space(path, size)
        write_weights(bilm, path)

    writers: Dict[str, Callable[[str], None]] = {
        OPTIONS_NAME: lambda path: _write_json(options, path),
        WEIGHTS_NAME: write_weight_file,
        **(more_files or {}),
    }
    with replaced_together(output_dir, list(writers)) as partials:
        for name, write in writers.items():
            write(partials[name])


def _write_json(value: Any, path: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2)
