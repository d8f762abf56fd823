"""The package's wheel as `pip wheel` builds it for a user: one builder for the tests that
install it; and where a CPU-only torch wheel for a user's install is found."""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Tuple

from tests.paths import PROJECT_ROOT

# What a wheel is built from: a copy of these, so that no build folder lands in the clone and
# nothing else of it (runs, caches) leaks into the wheel.
PACKAGE_FILES = [
    "setup.cfg",
    "setup.py",
    "pyproject.toml",
    "README.md",
    "elmo_plugin",
    "training_configs",
]


def build_wheel(source: Path, dist: Path) -> Path:
    """The elmo_plugin wheel of the project copy at `source`, built into `dist` without its
    dependencies or build isolation, so nothing is downloaded."""
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    result = subprocess.run(
        command + ["-w", str(dist), str(source)], capture_output=True, text=True
    )
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return next(dist.glob("elmo_plugin-*.whl"))


def build_project_wheel(root: Path) -> Path:
    """The project's wheel, built from a copy of `PACKAGE_FILES` under `root`."""
    (root / "src").mkdir()
    for name in PACKAGE_FILES:
        if (PROJECT_ROOT / name).is_dir():
            shutil.copytree(
                PROJECT_ROOT / name,
                root / "src" / name,
                ignore=shutil.ignore_patterns("__pycache__"),
            )
        else:
            shutil.copy(PROJECT_ROOT / name, root / "src" / name)
    return build_wheel(root / "src", root / "dist")


def pip_find_links() -> List[Path]:
    """The local folders pip is configured to find wheels in (`find-links`, from its
    configuration files or `PIP_FIND_LINKS`): where a machine without the CPU-only index keeps
    its wheels."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
    )
    values = [os.environ.get("PIP_FIND_LINKS", "")]
    for line in result.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith("find-links"):
            values.append(value.strip("'\""))
    folders = [
        Path(word.removeprefix("file://")) for value in values for word in shlex.split(value)
    ]
    return [folder for folder in dict.fromkeys(folders) if folder.is_dir()]


def cpu_torch_wheel() -> Optional[Tuple[Path, str]]:
    """A CPU-only torch wheel among pip's find-links and a Python on PATH that installs it
    (`pythonX.Y` for a `cpXY` wheel), or None."""
    for folder in pip_find_links():
        for wheel in sorted(folder.glob("torch-*+cpu-cp3*-*.whl")):
            tag = wheel.name.split("-")[2]  # cp311
            python = shutil.which(f"python{tag[2]}.{tag[3:]}")
            if python:
                return wheel, python
    return None
