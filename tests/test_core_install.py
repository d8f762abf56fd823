"""
`pip install elmo_plugin` alone, as a user without AllenNLP has it: the wheel installed into a
fresh virtual environment with the CPU-only torch (Python 3.11, whose CPU torch wheel the
machines of this project carry) and what pip resolves for the core (numpy, h5py, tqdm); `pip
check` clean; `import elmo_plugin` silent; the `elmo-embed` console command and
`ElmoEmbedder` embed from a user's directory; the environment under 1.5 GB.
"""

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.wheels import build_project_wheel

PYTHON = shutil.which("python3.11")
CPU_TORCH = glob.glob("/opt/wheels/torch-*+cpu-cp311-*.whl")
SHIPPED = "elmo_plugin://pretrained/elmo_wikipedia_512x128"
SIZE_LIMIT_BYTES = 1.5 * 2**30

pytestmark = pytest.mark.skipif(
    not (PYTHON and CPU_TORCH),
    reason="needs python3.11 and a CPU-only torch wheel for it in /opt/wheels",
)


def _run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())


@pytest.fixture(scope="module")
def core_environment(tmp_path_factory):
    root = tmp_path_factory.mktemp("core")
    wheel = build_project_wheel(root)
    venv = root / "venv"
    _run([PYTHON, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", CPU_TORCH[0], str(wheel)])
    return venv


def test_the_core_installs_without_allennlp_and_pip_check_is_clean(core_environment):
    python = str(core_environment / "bin" / "python")
    listed = _run([python, "-m", "pip", "list", "--format=freeze"]).stdout.lower()
    assert "elmo-plugin==" in listed.replace("_", "-")
    assert "allennlp" not in listed
    _run([python, "-m", "pip", "check"])
    assert _size(core_environment) < SIZE_LIMIT_BYTES


def test_the_core_embeds_from_a_users_directory_silently(core_environment, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("The cat sat .\nHello\n", encoding="utf-8")
    python = str(core_environment / "bin" / "python")
    script = (
        "import elmo_plugin, sys; "
        "v = elmo_plugin.ElmoEmbedder().embed_sentence(['The', 'cat']); "
        "assert v.shape == (3, 2, 256), v.shape; "
        "assert 'allennlp' not in sys.modules; print('ok')"
    )
    result = _run([python, "-W", "always", "-c", script], cwd=tmp_path, env=env)
    assert result.stdout.strip() == "ok" and result.stderr == ""
    command = [
        str(core_environment / "bin" / "elmo-embed"),
        "--options-file",
        f"{SHIPPED}/options.json",
        "--weight-file",
        f"{SHIPPED}/weights.hdf5",
        "sentences.txt",
        "out.hdf5",
    ]
    _run(command, cwd=tmp_path, env=env)
    assert (tmp_path / "out.hdf5").stat().st_size > 0
