"""The package's wheel as `pip wheel` builds it for a user: one builder for the tests that
install it."""

import subprocess
import sys
from pathlib import Path


def build_wheel(source: Path, dist: Path) -> Path:
    """The elmo_plugin wheel of the project copy at `source`, built into `dist` without its
    dependencies or build isolation, so nothing is downloaded."""
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    result = subprocess.run(
        command + ["-w", str(dist), str(source)], capture_output=True, text=True
    )
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return next(dist.glob("elmo_plugin-*.whl"))
