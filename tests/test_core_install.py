"""
`pip install elmo_plugin` alone, as a user without AllenNLP has it: the wheel installed into a
fresh virtual environment with the CPU-only torch (a wheel of it among pip's find-links, and the
Python it is built for) and what pip resolves for the core (numpy, h5py, tqdm); `pip check`
clean; `import elmo_plugin` silent; the `elmo-embed` console command and `ElmoEmbedder` embed
from a user's directory; the environment under 1.5 GB.
"""

import os
import subprocess
from pathlib import Path

import pytest

from tests.wheels import build_project_wheel, cpu_torch_wheel

CPU_TORCH = cpu_torch_wheel()
SHIPPED = "elmo_plugin://pretrained/elmo_wikipedia_512x128"
SIZE_LIMIT_BYTES = 1.5 * 2**30

pytestmark = pytest.mark.skipif(
    CPU_TORCH is None,
    reason="needs a CPU-only torch wheel among pip's find-links and the Python it is built for",
)


# A user's shell: none of this process's Python settings (a PYTHONPATH naming the clone would
# make pip take the package as installed, and the environment import the clone).
USER_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}


def _run(command, **kwargs):
    kwargs.setdefault("env", USER_ENV)
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
    assert CPU_TORCH is not None
    torch_wheel, base_python = CPU_TORCH
    _run([base_python, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", str(torch_wheel), str(wheel)])
    return venv


def test_the_core_installs_without_allennlp_and_pip_check_is_clean(core_environment):
    python = str(core_environment / "bin" / "python")
    listed = _run([python, "-m", "pip", "list", "--format=freeze"]).stdout.lower()
    assert "elmo-plugin==" in listed.replace("_", "-")
    assert "allennlp" not in listed
    _run([python, "-m", "pip", "check"])
    assert _size(core_environment) < SIZE_LIMIT_BYTES


def test_the_core_embeds_from_a_users_directory_silently(core_environment, tmp_path):
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("The cat sat .\nHello\n", encoding="utf-8")
    python = str(core_environment / "bin" / "python")
    script = (
        "import elmo_plugin, sys; "
        "v = elmo_plugin.ElmoEmbedder().embed_sentence(['The', 'cat']); "
        "assert v.shape == (3, 2, 256), v.shape; "
        "assert 'allennlp' not in sys.modules; print('ok')"
    )
    result = _run([python, "-W", "always", "-c", script], cwd=tmp_path)
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
    _run(command, cwd=tmp_path)
    assert (tmp_path / "out.hdf5").stat().st_size > 0
