"""
One reader for each biLM format (`elmo_plugin.elmo.formats.readers.READERS`): every format
naming tells apart has exactly one, and `load_bilm` resolves a name once and loads it through
its format's reader, for every format the fixtures hold (a folder, a ZIP, a `.tar.gz`).
"""

import ast
import json
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import pytest

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.formats import readers
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.elmo.formats.naming import names, tar_archives
from elmo_plugin.elmo.formats.naming.bilm_formats import (
    BILM_FOLDER_FORMATS,
    BILM_TF,
    BILM_TF_NLPL,
    EFML,
    NLPL_WEIGHTS_NAME,
    OPTIONS_NAME,
    TF_CHECKPOINT,
    TF_HUB,
    WEIGHTS_NAME,
)
from tests.paths import FIXTURES, PROJECT_ROOT

TINY_OPTIONS = FIXTURES / "elmo" / "options.json"
TINY_WEIGHTS = FIXTURES / "elmo" / "lm_weights.hdf5"


def _pair_folder(tmp_path: Path, weights_name: str) -> str:
    """A folder holding the tiny biLM's options and weights, the weights named `weights_name`."""
    folder = tmp_path / weights_name.split(".")[0]
    folder.mkdir()
    shutil.copy(TINY_OPTIONS, folder / OPTIONS_NAME)
    shutil.copy(TINY_WEIGHTS, folder / weights_name)
    return str(folder)


def _zipped(tmp_path: Path, folder: Path) -> str:
    archive = tmp_path / f"{folder.name}.zip"
    with zipfile.ZipFile(archive, "w") as opened:
        for path in sorted(folder.rglob("*")):
            opened.write(path, str(path.relative_to(folder)))
    return str(archive)


def _tarred(tmp_path: Path, folder: Path) -> str:
    archive = tmp_path / f"{folder.name}.tar.gz"
    with tarfile.open(archive, "w:gz") as opened:
        for path in sorted(folder.rglob("*")):
            opened.add(path, str(path.relative_to(folder)), recursive=False)
    return str(archive)


# Each fixture biLM, as a name and weight file given to `load_bilm`, with its format.
NAMES: Dict[str, Tuple[Callable[[Path], Tuple[str, Optional[str]]], str]] = {
    "bilm-tf pair": (lambda tmp: (str(TINY_OPTIONS), str(TINY_WEIGHTS)), BILM_TF),
    "bilm-tf folder": (lambda tmp: (_pair_folder(tmp, WEIGHTS_NAME), None), BILM_TF),
    "bilm-tf ZIP": (
        lambda tmp: (_zipped(tmp, Path(_pair_folder(tmp, WEIGHTS_NAME))), None),
        BILM_TF,
    ),
    "bilm-tf NLPL folder": (lambda tmp: (_pair_folder(tmp, NLPL_WEIGHTS_NAME), None), BILM_TF_NLPL),
    "bilm-tf NLPL ZIP": (
        lambda tmp: (_zipped(tmp, Path(_pair_folder(tmp, NLPL_WEIGHTS_NAME))), None),
        BILM_TF_NLPL,
    ),
    "ELMoForManyLangs folder": (lambda tmp: (str(FIXTURES / "efml" / "model"), None), EFML),
    "ELMoForManyLangs ZIP": (lambda tmp: (_zipped(tmp, FIXTURES / "efml" / "model"), None), EFML),
    "TF checkpoint": (
        lambda tmp: (str(FIXTURES / "tensorflow" / "bilm_checkpoint"), None),
        TF_CHECKPOINT,
    ),
    "TF checkpoint prefix": (
        lambda tmp: (str(FIXTURES / "tensorflow" / "bilm_checkpoint" / "model.ckpt-74"), None),
        TF_CHECKPOINT,
    ),
    "TF-Hub module": (lambda tmp: (str(FIXTURES / "tensorflow" / "hub_module"), None), TF_HUB),
    "TF-Hub .tar.gz": (
        lambda tmp: (_tarred(tmp, FIXTURES / "tensorflow" / "hub_module"), None),
        TF_HUB,
    ),
}


def test_every_format_naming_knows_has_exactly_one_reader():
    assert list(readers.READERS) == list(BILM_FOLDER_FORMATS)
    assert all(callable(reader) for reader in readers.READERS.values())


def _reads_a_format(path: Path) -> bool:
    """Whether the module at `path` reads a `.format` attribute (not `str.format` called)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return any(
        isinstance(node, ast.Attribute) and node.attr == "format" and id(node) not in called
        for node in ast.walk(tree)
    )


def test_the_core_branches_on_a_format_only_in_the_reader_table_and_naming():
    core = PROJECT_ROOT / "elmo_plugin" / "elmo"
    branching = sorted(
        str(path.relative_to(core)) for path in core.rglob("*.py") if _reads_a_format(path)
    )
    assert branching == ["formats/naming/names.py", "formats/readers.py"]


def test_the_format_check_sees_an_attribute_and_not_a_string_format(tmp_path):
    module = tmp_path / "module.py"
    module.write_text('text = "{}".format(1)\n')
    assert not _reads_a_format(module)
    module.write_text("if files.format == EFML:\n    pass\n")
    assert _reads_a_format(module)


def _count_resolutions(monkeypatch) -> List[str]:
    """Every call of `resolve_bilm`, through whichever module's name for it, by its name."""
    calls: List[str] = []
    original = names.resolve_bilm

    def counted(options_file, weight_file=None, what="options_file"):
        calls.append(str(options_file))
        return original(options_file, weight_file, what)

    for module in list(sys.modules.values()):
        if module is not None and getattr(module, "resolve_bilm", None) is original:
            monkeypatch.setattr(module, "resolve_bilm", counted)
    return calls


def _record_readers(monkeypatch) -> List[str]:
    """The format of each reader `load_bilm` calls."""
    read: List[str] = []
    table = dict(readers.READERS)
    for fmt, reader in table.items():

        def recorded(files, build, fmt=fmt, reader=reader):
            read.append(fmt)
            return reader(files, build)

        table[fmt] = recorded
    monkeypatch.setattr(readers, "READERS", table)
    return read


@pytest.mark.parametrize("kind", list(NAMES))
def test_loading_resolves_the_name_once_and_reads_it_by_its_format(kind, tmp_path, monkeypatch):
    make, fmt = NAMES[kind]
    monkeypatch.setattr(tar_archives, "_UNPACKED_DIRECTORY", str(tmp_path / "cache"))
    name, weight_file = make(tmp_path)
    resolutions = _count_resolutions(monkeypatch)
    read = _record_readers(monkeypatch)
    bilm = load_bilm(name, weight_file)
    assert isinstance(bilm, ElmoBiLm)
    assert resolutions == [name]
    assert read == [fmt]


def test_options_given_inline_are_read_without_resolving_a_name(monkeypatch):
    options = {str(TINY_OPTIONS): json.loads(TINY_OPTIONS.read_text())}
    resolutions = _count_resolutions(monkeypatch)
    read = _record_readers(monkeypatch)
    load_bilm(str(TINY_OPTIONS), None, known_options=options)
    assert resolutions == [] and read == [BILM_TF]
