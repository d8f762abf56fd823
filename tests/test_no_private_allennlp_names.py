"""The library uses AllenNLP through its public names only: an AllenNLP release may rename or
drop a private one without notice, which would break us silently."""

import ast
import os
from typing import Iterator, List, Set

from tests.paths import PROJECT_ROOT

LIBRARY = os.path.join(PROJECT_ROOT, "elmo_plugin")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_allennlp(module: str) -> bool:
    return module == "allennlp" or module.startswith("allennlp.")


def _sources() -> Iterator[str]:
    for directory, _, names in os.walk(LIBRARY):
        yield from (os.path.join(directory, n) for n in sorted(names) if n.endswith(".py"))


def _root_name(node: ast.expr) -> str:
    """The name an expression such as `a.b(c)[0].d` starts from: `a`."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def private_uses(source: str) -> List[str]:
    """Imports of private AllenNLP names (`from allennlp.x import _y`, `allennlp._x`), and
    private attributes reached from a name an AllenNLP import bound (`Highway._layers`)."""
    tree = ast.parse(source)
    found: List[str] = []
    bound: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _is_allennlp(node.module or ""):
            parts = (node.module or "").split(".")
            for alias in node.names:
                if any(map(_private, parts + [alias.name])):
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
                bound.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _is_allennlp(alias.name):
                    if any(map(_private, alias.name.split("."))):
                        found.append(f"line {node.lineno}: import {alias.name}")
                    bound.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and _root_name(node) in bound:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_check_finds_private_names():
    source = (
        "from allennlp.modules.highway import Highway\n"
        "from allennlp.nn.util import _hidden\n"
        "from allennlp.common import (\n    Params,\n    _Private as P,\n)\n"
        "import allennlp._internal.x\n"
        "layers = Highway(2)._layers\n"
        "attribute = allennlp.nn._util\n"
        "public = Highway(2).forward\n"
    )
    assert [use.split(":")[0] for use in private_uses(source)] == [
        "line 2",
        "line 3",
        "line 7",
        "line 8",
        "line 9",
    ]


def test_the_library_imports_no_private_allennlp_name():
    uses = {
        os.path.relpath(path, PROJECT_ROOT): private_uses(open(path, encoding="utf-8").read())
        for path in _sources()
    }
    assert {path: found for path, found in uses.items() if found} == {}


def _stored_private_attributes(tree: ast.AST) -> Set[str]:
    """The private names a source assigns as attributes (`self._x = ...`)."""
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
        if _private(node.attr)
    }


def _defined_names(tree: ast.AST) -> Set[str]:
    names = _stored_private_attributes(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def test_the_core_reaches_no_private_attribute_of_allennlps_objects() -> None:
    """Attributes are untyped here, so by name: in `elmo_plugin/elmo/`, no private attribute
    that AllenNLP's own classes store (`Highway._layers`, `TimeDistributed._module`) and the
    core does not define itself."""
    import allennlp

    theirs: Set[str] = set()
    for directory, _, names in os.walk(os.path.dirname(allennlp.__file__)):
        for name in (n for n in names if n.endswith(".py")):
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                theirs |= _stored_private_attributes(ast.parse(handle.read()))
    core = [path for path in _sources() if os.sep + "elmo" + os.sep in path]
    trees = {path: ast.parse(open(path, encoding="utf-8").read()) for path in core}
    ours = set().union(*map(_defined_names, trees.values()))
    reached = [
        f"{os.path.relpath(path, PROJECT_ROOT)}:{node.lineno}: {ast.unparse(node)}"
        for path, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in theirs - ours
    ]
    assert reached == []
