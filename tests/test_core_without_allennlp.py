"""
The ELMo core (`elmo_plugin.elmo`) and the embedding layer (`elmo_plugin.embedding`) need no
AllenNLP: no module of theirs imports it (or anything of ours above them), and `import
elmo_plugin` embeds in a process where AllenNLP cannot be imported, silently.
"""

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.paths import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "elmo_plugin"
# What the plugin layer brings and the core must not import.
FORBIDDEN = {"allennlp", "allennlp_models", "overrides", "_jsonnet", "jsonnet", "spacy"}
# Each AllenNLP-free layer and the layers of ours it may import.
LAYERS = {"elmo": ("elmo_plugin.elmo",), "embedding": ("elmo_plugin.elmo", "elmo_plugin.embedding")}


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_the_layer_imports_no_allennlp_and_nothing_above_it(layer):
    wrong = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for name in _imports(path):
            ours = name == "elmo_plugin" or name.startswith("elmo_plugin.")
            if name.split(".")[0] in FORBIDDEN or (ours and not name.startswith(LAYERS[layer])):
                wrong.append(f"{path.relative_to(PROJECT_ROOT)}: {name}")
    assert not wrong


def test_the_check_finds_an_allennlp_import(tmp_path):
    """The scan above can fail: it sees an import inside a function, too."""
    module = tmp_path / "late.py"
    module.write_text("def f():\n    from allennlp.common import Params\n")
    assert "allennlp.common" in set(_imports(module))


BLOCKED_RUN = textwrap.dedent("""
    import importlib.abc, sys
    class Blocked(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in {forbidden!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
    sys.meta_path.insert(0, Blocked())
    import elmo_plugin
    vectors = elmo_plugin.ElmoEmbedder().embed_sentence(["Hello", "world", "."])
    assert vectors.shape == (3, 3, 256), vectors.shape
    from elmo_plugin.embedding import cli
    cli.main([
        "--options-file", "elmo_plugin://pretrained/elmo_wikipedia_512x128/options.json",
        "--weight-file", "elmo_plugin://pretrained/elmo_wikipedia_512x128/weights.hdf5",
        sys.argv[1], sys.argv[2],
    ])
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in {forbidden!r})
    assert not loaded, loaded
    print("embedded")
    """)


def test_elmo_plugin_embeds_where_allennlp_cannot_be_imported(tmp_path):
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("Hello world .\nA second one\n", encoding="utf-8")
    output = tmp_path / "out.hdf5"
    result = subprocess.run(
        [sys.executable, "-W", "always", "-c", BLOCKED_RUN.format(forbidden=FORBIDDEN)]
        + [str(sentences), str(output)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "embedded"
    # No warning on import or use: stderr holds the progress bar only.
    assert "Warning" not in result.stderr, result.stderr[-3000:]
    assert output.is_file()
