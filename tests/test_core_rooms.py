"""
The core's house, drawn from its imports: at most six rooms at the top of `elmo_plugin.elmo`,
imports between them flowing one way (each room imports only rooms before it in `ROOMS`: file
safety, `files`, only the error, so that every layer may write and read through it), no file
over 400 lines, and the device decided in few files.
"""

import ast
import re
from pathlib import Path
from typing import Dict, Set

from tests.paths import PROJECT_ROOT

CORE = PROJECT_ROOT / "elmo_plugin" / "elmo"
# Lowest first: a room may import the rooms before it, never one after it.
ROOMS = ["errors", "files", "execution", "bilm", "formats", "modules"]
MAX_LINES = 400
# A device check, in any of the forms code branches on the device with: a tensor's or a
# device's flags and type, what torch's CUDA sees, a device name compared as a string.
DEVICE_CHECK = re.compile(
    r"\.is_cuda\b|\.is_cpu\b|\.type\s*(?:[!=]=|in\b)|\.device\s*[!=]=|"
    r"torch\.cuda\.(?:is_available|device_count|current_device)\(|"
    r"[!=]=\s*[\"'](?:cuda|cpu)\b|[\"'](?:cuda|cpu)[\"']\s*(?:[!=]=|in\b)|\.startswith\([\"']cuda"
)
DEVICE_CHECKS = [
    "if x.is_cuda:",
    "if x.is_cpu:",
    'if device.type == "cuda":',
    'if x.device.type in ("cuda", "mps"):',
    "if x.device != y.device:",
    "if torch.cuda.is_available():",
    "n = torch.cuda.device_count()",
    'if str(device) == "cpu":',
    'if "cuda" in str(x.device):',
    'if name.startswith("cuda"):',
]
NOT_DEVICE_CHECKS = ["with torch.autocast(x.device.type, enabled=False):", "x.to(device)"]


def _room(path: Path) -> str:
    return path.relative_to(CORE).parts[0].removesuffix(".py")


def _room_imports() -> Dict[str, Set[str]]:
    arrows: Dict[str, Set[str]] = {}
    for path in CORE.rglob("*.py"):
        if path.parent == CORE and path.name == "__init__.py":
            continue  # the core's public names, gathered from every room
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[:2] == ["elmo_plugin", "elmo"] and len(parts) > 2:
                    arrows.setdefault(_room(path), set()).add(parts[2])
    return arrows


def test_the_core_has_at_most_six_rooms():
    rooms = {_room(p) for p in CORE.iterdir() if p.name != "__init__.py"} - {"__pycache__"}
    assert rooms == set(ROOMS) and len(rooms) <= 6


def test_imports_between_rooms_flow_one_way():
    back = [
        f"{room} -> {target}"
        for room, targets in _room_imports().items()
        for target in targets
        if target != room and ROOMS.index(target) > ROOMS.index(room)
    ]
    assert not back


def test_no_core_file_is_over_400_lines():
    long = [
        f"{path.relative_to(CORE)}: {n}"
        for path in CORE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert not long


def test_the_device_check_pattern_sees_every_form_of_check():
    assert [line for line in DEVICE_CHECKS if not DEVICE_CHECK.search(line)] == []
    assert [line for line in NOT_DEVICE_CHECKS if DEVICE_CHECK.search(line)] == []


def test_the_device_is_decided_in_at_most_three_library_files():
    library = PROJECT_ROOT / "elmo_plugin"
    deciding = sorted(
        str(path.relative_to(library))
        for path in library.rglob("*.py")
        if DEVICE_CHECK.search(path.read_text(encoding="utf-8"))
    )
    assert len(deciding) <= 3, deciding


def _module_imports(path: Path) -> Dict[str, Set[str]]:
    """Each `elmo_plugin.elmo.formats` module imported by `path`, at the top and in functions."""
    found: Dict[str, Set[str]] = {"top": set(), "function": set()}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_functions = {
        id(node)
        for function in ast.walk(tree)
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        for node in ast.walk(function)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("elmo_plugin.elmo.formats"):
                found["function" if id(node) in in_functions else "top"].add(node.module)
    return found


def test_formats_import_one_another_without_a_cycle_or_a_hidden_import():
    formats = CORE / "formats"
    modules = {
        "elmo_plugin." + ".".join(p.relative_to(PROJECT_ROOT).with_suffix("").parts): p
        for p in formats.rglob("*.py")
    }
    graph = {name: _module_imports(path)["top"] & set(modules) for name, path in modules.items()}
    # A cycle hidden by importing inside a function is a cycle too.
    hidden = {
        name: _module_imports(path)["function"]
        for name, path in modules.items()
        if _module_imports(path)["function"]
    }
    assert not hidden
    done: Set[str] = set()

    def visit(name: str, path: tuple) -> None:
        assert name not in path, " -> ".join(path + (name,))
        if name not in done:
            for imported in graph[name]:
                visit(imported, path + (name,))
            done.add(name)

    for name in graph:
        visit(name, ())


# What naming (a biLM's name to its files, the published biLMs, the package's files, downloads)
# may import of the core: never a codec, so that a name is resolved before any format is read.
NAMING = CORE / "formats" / "naming"
NAMING_PACKAGE = "elmo_plugin.elmo.formats.naming"
NAMING_MAY_IMPORT = ("elmo_plugin.elmo.errors.", "elmo_plugin.elmo.files.", NAMING_PACKAGE + ".")


def _core_imports(path: Path) -> Set[str]:
    """Every `elmo_plugin.elmo` module (or name in one) `path` imports, anywhere in it."""
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("elmo_plugin.elmo.")}


def test_naming_imports_no_codec():
    codecs = {
        f"{path.relative_to(CORE)}: {name}"
        for path in NAMING.rglob("*.py")
        for name in _core_imports(path)
        if not name.startswith(NAMING_MAY_IMPORT)
    }
    assert not codecs, sorted(codecs)


def test_the_naming_check_sees_a_codec_imported_in_a_function(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("def f():\n    from elmo_plugin.elmo.formats.bilm_tf import read_weights\n")
    assert _core_imports(module) == {"elmo_plugin.elmo.formats.bilm_tf.read_weights"}
