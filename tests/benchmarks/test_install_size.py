"""`benchmarks/install_size.py` counts pip check's broken requirements, both kinds, and a clean
environment as none (docs/install.md quotes these counts)."""

import importlib.util

from tests.paths import PROJECT_ROOT


def _install_size():
    path = PROJECT_ROOT / "benchmarks" / "install_size.py"
    spec = importlib.util.spec_from_file_location("install_size", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


broken_requirements = _install_size().broken_requirements

USER_INSTALL = """\
allennlp 2.10.1 requires pytest, which is not installed.
allennlp 2.10.1 has requirement torch<1.13.0,>=1.10.0, but you have torch 2.15.0.
spacy 3.8.18 has requirement typer<1.0.0,>=0.3.0, but you have typer 1.2.0.
"""


def test_a_clean_environment_has_no_broken_requirement():
    assert broken_requirements("No broken requirements found.\n") == {"all": 0, "AllenNLP's": 0}


def test_both_kinds_of_broken_requirement_are_counted_by_distribution():
    assert broken_requirements(USER_INSTALL) == {"all": 3, "AllenNLP's": 2}
