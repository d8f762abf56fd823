"""The package's wheel as `pip wheel` builds it for a user: one builder for the tests that
install it."""

import shutil
import subprocess
import sys
from pathlib import Path

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
