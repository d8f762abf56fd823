"""Shared fixtures, the `gpu` marker and the `tf_reference` marker (tests/tensorflow_reference.py).

Tests that need a CUDA device are marked `@pytest.mark.gpu` (or, for a parametrized device,
`pytest.param("cuda", marks=pytest.mark.gpu)`); they skip where `torch.cuda.is_available()` is
false. On a CUDA machine, `pytest -m gpu tests` runs just them (gpu/gpu_check.sh does),
and `pytest -m "not gpu" tests` leaves them out."""

import json
import lzma
import os
import pathlib
import sys
from typing import Callable, List, Sequence

import pytest
import torch

from tests.paths import FIXTURES, PROJECT_ROOT, SHARED_DATA, TF_PYTHON_VARIABLE

# The Makefile installs allennlp-models here, off the default import path (see the fixture).
ALLENNLP_MODELS_DIR = os.path.join(sys.prefix, "allennlp-models")

# The helpers assert too; rewritten, their failures show the values as a test's do.
pytest.register_assert_rewrite("tests.tasks.training_helpers")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.addinivalue_line(
        "markers",
        f"tf_reference: makes TensorFlow references anew (skipped without {TF_PYTHON_VARIABLE})",
    )
    config.addinivalue_line(
        "markers", "slow: trains, builds a wheel or installs (left out by `make test-fast`)"
    )


def pytest_collection_modifyitems(config, items):
    skips = {
        "gpu": None if torch.cuda.is_available() else "needs a CUDA device",
        "tf_reference": (
            None
            if os.environ.get(TF_PYTHON_VARIABLE)
            else f"needs {TF_PYTHON_VARIABLE}, a TensorFlow venv's Python "
            "(tests/tensorflow_reference.py)"
        ),
    }
    for item in items:
        for marker, reason in skips.items():
            if reason is not None and item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread():
    # The tests share a busy 2-core machine: intra-op threads spin against each other while
    # descheduled, and a tiny model's training step gets ~10x slower.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def _run_from_project_root(monkeypatch):
    # Configs name data relative to the project root, as the README runs them; the packaged
    # configs' data folder is named as the project's runs name it (experiments/configs.py).
    from elmo_plugin.allennlp.data_paths import DATA_VARIABLE

    monkeypatch.chdir(PROJECT_ROOT)
    monkeypatch.setenv(DATA_VARIABLE, "../shared/data")


@pytest.fixture
def allennlp_models(monkeypatch) -> str:
    """Puts allennlp-models on the import path for one test (and its subprocesses), with
    `nltk.download` stubbed: AllenNLP imports an installed allennlp-models into every command,
    whose NarrativeQA tools then download NLTK data, so our environments keep it aside."""
    if not os.path.isdir(os.path.join(ALLENNLP_MODELS_DIR, "allennlp_models")):
        pytest.fail(
            f"allennlp-models is not in {ALLENNLP_MODELS_DIR}: `make venv` installs it there"
        )
    monkeypatch.syspath_prepend(ALLENNLP_MODELS_DIR)
    paths = [ALLENNLP_MODELS_DIR] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    import nltk

    monkeypatch.setattr(nltk, "download", lambda *args, **kwargs: False)
    return ALLENNLP_MODELS_DIR


@pytest.fixture
def command_changes(monkeypatch) -> Callable[[], None]:
    """Makes the `allennlp` command's changes to AllenNLP (`framework.COMMAND`) in this test
    when called, each undone after it."""
    import importlib

    from elmo_plugin.allennlp.framework import COMMAND, REPLACEMENTS, install

    def make() -> None:
        for row in REPLACEMENTS:
            if row.when == COMMAND:
                module = importlib.import_module(row.module)
                monkeypatch.setattr(module, row.name, getattr(module, row.name))
        install(COMMAND)

    return make


@pytest.fixture
def elmo_options() -> str:
    """The tiny bilm-tf-format test biLM of AllenNLP (fixtures/elmo)."""
    return os.path.join(FIXTURES, "elmo", "options.json")


@pytest.fixture
def elmo_weights() -> str:
    return os.path.join(FIXTURES, "elmo", "lm_weights.hdf5")


@pytest.fixture
def sentences() -> List[List[str]]:
    """The 30 sentences AllenNLP's ELMo tests use."""
    with open(os.path.join(FIXTURES, "elmo", "sentences.json")) as handle:
        return [line.split() for group in json.load(handle) for line in group]


@pytest.fixture
def elmo_files_arguments(elmo_options, elmo_weights) -> List[str]:
    """The command-line arguments (`elmo-embed`'s) that name the test biLM by its files."""
    return ["--options-file", elmo_options, "--weight-file", elmo_weights]


@pytest.fixture
def sentences_file(tmp_path) -> Callable[..., pathlib.Path]:
    """Writes tokenised sentences, one a line as `elmo-embed` reads them, to a text file in
    `tmp_path` (`name`, "sentences.txt" unless given): its path."""

    def write(sentences: Sequence[Sequence[str]], name: str = "sentences.txt") -> pathlib.Path:
        path = tmp_path / name
        path.write_text("".join(" ".join(sentence) + "\n" for sentence in sentences))
        return path

    return write


@pytest.fixture
def shared_data() -> str:
    """../shared/data beside the project; tests that need it skip without it."""
    if not os.path.isdir(SHARED_DATA):
        pytest.skip("../shared/data is not beside the project")
    return str(SHARED_DATA)


@pytest.fixture
def corpus_sentences(shared_data) -> Callable[[int], List[List[str]]]:
    """The first sentences of the tokenised held-out Wikipedia corpus of ../shared/data."""
    path = os.path.join(shared_data, "lm_wikipedia_en_2015", "tokenized", "valid.txt.xz")

    def read(count: int) -> List[List[str]]:
        found = []
        with lzma.open(path, "rt", encoding="utf-8") as corpus:
            for line in corpus:
                if line.split():
                    found.append(line.split())
                if len(found) == count:
                    break
        return found

    return read
