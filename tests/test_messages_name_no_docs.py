"""What the package says to a user (errors, warnings, help texts: every string that is not a
docstring or a comment) never sends them to `docs/`: a pip install carries no docs, so a
message says what it means itself."""

import ast
from typing import List

from tests.paths import PROJECT_ROOT

DOCS = "docs/"


def _docstring_nodes(tree: ast.AST) -> set:
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, owners)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def strings_naming_docs(source: str, name: str) -> List[str]:
    tree = ast.parse(source, filename=name)
    docstrings = _docstring_nodes(tree)
    return [
        f"{name}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and DOCS in node.value
        and id(node) not in docstrings
    ]


def test_no_message_of_the_package_names_docs():
    found = [
        line
        for path in sorted((PROJECT_ROOT / "elmo_plugin").rglob("*.py"))
        for line in strings_naming_docs(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not found, "messages that send a pip user to docs/:\n" + "\n".join(found)


def test_a_message_naming_docs_is_found_and_a_docstring_is_not():
    source = '"""See docs/elmo.md."""\n\ndef f():\n    raise ValueError(f"{1} (docs/gpu.md)")\n'
    assert strings_naming_docs(source, "m.py") == ["m.py:4: ' (docs/gpu.md)'"]
