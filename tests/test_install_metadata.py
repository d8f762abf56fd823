"""The user's install of the README ("Using the plugin from your own project") resolves: its pip
commands, run against this tested environment without an index (`--dry-run --no-index`), find
everything the wheel's metadata asks for; runtime needs are separate from test and lint tools."""

import configparser
import re
import subprocess
import sys

import pytest
import torch

from tests.paths import PROJECT_ROOT
from tests.wheels import build_project_wheel

TOOLS = {
    "pytest",
    "pytest-xdist",
    "hypothesis",
    "black",
    "flake8",
    "mypy",
    "datasets",
    "setuptools",
}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), 1)[0].lower().replace("_", "-")


def _extras():
    config = configparser.ConfigParser()
    config.read(PROJECT_ROOT / "setup.cfg")
    extras = {
        name: [line for line in value.splitlines() if line.strip()]
        for name, value in config["options.extras_require"].items()
    }
    install = [line for line in config["options"]["install_requires"].splitlines() if line.strip()]
    return install, extras


def _readme_user_commands():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Using the plugin from your own project", 1)[1]
    match = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert match is not None, "no bash block in the README's section"
    block = match.group(1)
    return [
        line.split("#")[0].strip() for line in block.splitlines() if line.startswith("pip install")
    ]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return build_project_wheel(tmp_path_factory.mktemp("install"))


# The README's user install is the current profile's (torch >= 2.6): the allennlp-2.10
# profile's environment, torch 1.12, cannot satisfy the `allennlp` extra, by design.
CURRENT_TORCH = tuple(int(part) for part in torch.__version__.split(".")[:2]) >= (2, 6)


@pytest.mark.skipif(not CURRENT_TORCH, reason="the README's user install is the current profile's")
def test_the_readme_user_install_resolves_against_the_tested_environment(wheel):
    commands = _readme_user_commands()
    assert commands == [
        "pip install torch torchvision --index-url https://download.pytorch.org/whl/cpu",
        'pip install "<clone>[allennlp]"',
        "pip install --no-deps allennlp==2.10.1",
    ]
    for command in commands[1:]:  # the CPU-only torch is an alternative source of torch
        arguments = command.replace('"<clone>[allennlp]"', f"{wheel}[allennlp]").split()[2:]
        result = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", *arguments],
            capture_output=True,
            text=True,
        )
        assert (
            result.returncode == 0
        ), f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        assert "ResolutionImpossible" not in result.stderr


def test_runtime_needs_are_separate_from_test_and_lint_tools():
    install, extras = _extras()
    assert set(extras) == {"allennlp", "test", "lint", "onnx", "parquet", "ray", "spark", "serve"}
    assert "allennlp" not in {_name(r) for r in install + extras["allennlp"]}
    assert not TOOLS & {_name(r) for r in install + extras["allennlp"]}
    assert {_name(r) for r in extras["lint"]} == {"black", "flake8", "mypy"}
    assert {_name(r) for r in extras["onnx"]} == {"onnx", "onnxruntime"}


def test_the_core_needs_torch_numpy_h5py_and_tqdm_only():
    install, _ = _extras()
    assert {_name(r) for r in install} == {"torch", "numpy", "h5py", "tqdm"}


def test_the_allennlp_extra_is_the_runtime_section_of_the_profiles_requirements():
    _, extras = _extras()
    lines = (PROJECT_ROOT / "requirements" / "current.in").read_text().splitlines()
    requirements = [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]
    runtime = requirements[: requirements.index("conllu==4.4.2")]
    expected = [r for r in runtime if _name(r) not in TOOLS | {"wheel"}]
    assert sorted(extras["allennlp"]) == sorted(expected)
    # The profile installs exactly the extras' needs (and pip's own `wheel`).
    every = {_name(r) for name in extras for r in extras[name]}
    assert {_name(r) for r in requirements} - {"wheel"} == every
