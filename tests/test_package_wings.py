"""The package's house: three wings, one per audience (`elmo` for torch users, `embedding` for
numpy and command-line users, `allennlp` for config users) and the package's own files; imports
flow elmo <- embedding <- allennlp, and AllenNLP is imported under `elmo_plugin/allennlp/` only."""

import ast
from pathlib import Path
from typing import Iterator, Tuple

from tests.paths import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "elmo_plugin"
WINGS = ["elmo", "embedding", "allennlp"]  # lowest first
OWN_FILES = {"__init__.py", "version.py", "console.py", "pretrained"}


def _imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def _library_imports() -> Iterator[Tuple[Path, str]]:
    for path in PACKAGE.rglob("*.py"):
        for name in _imports(path):
            yield path.relative_to(PACKAGE), name


def test_the_top_level_is_three_wings_and_the_packages_own_files():
    rooms = {path.name for path in PACKAGE.iterdir()} - {"__pycache__"}
    assert rooms == set(WINGS) | OWN_FILES and len(rooms) <= 7


def test_allennlp_is_imported_only_in_its_wing():
    outside = [
        f"{path}: {name}"
        for path, name in _library_imports()
        if name.split(".")[0] == "allennlp" and path.parts[0] != "allennlp"
    ]
    assert not outside


def test_imports_between_the_wings_flow_one_way():
    back = [
        f"{path}: {name}"
        for path, name in _library_imports()
        if path.parts[0] in WINGS
        and name.split(".")[:1] == ["elmo_plugin"]
        and len(name.split(".")) > 1
        and name.split(".")[1] in WINGS
        and WINGS.index(name.split(".")[1]) > WINGS.index(path.parts[0])
    ]
    assert not back
