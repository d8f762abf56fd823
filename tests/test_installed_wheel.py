"""
The package as a user gets it: a wheel built from the repository, installed (not editable) in
a fresh virtual environment, used from a directory outside the clone. Dependencies come from
the running environment through a .pth file, so nothing is downloaded; the editable
elmo_plugin of the running environment is not visible there (its finder's .pth sits in a
site-packages that is only appended, not processed).
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import h5py
import pytest

from tests.paths import FIXTURES, PROJECT_ROOT
from tests.wheels import build_wheel

# Trains, builds a wheel or runs AllenNLP in a process of its own: `make test-fast` leaves it out.
pytestmark = pytest.mark.slow

NOT_SOURCES = shutil.ignore_patterns(
    ".git", "build", "runs", "output", ".venv*", "*.egg-info", "__pycache__", "fixtures", "docs"
)

USER_CONFIG = """
local elmo = import "elmo_plugin/training_configs/common/elmo.libsonnet";
{
  dataset_reader: {
    type: "text_classification_json",
    tokenizer: { type: "whitespace" },
    token_indexers: elmo.indexers,
  },
  train_data_path: "train.jsonl",
  validation_data_path: "train.jsonl",
  model: {
    type: "basic_classifier",
    text_field_embedder: { token_embedders: elmo.embedders(elmo.embedder()) },
    seq2vec_encoder: { type: "boe", embedding_dim: elmo.output_dim },
  },
  data_loader: { batch_size: 4 },
  trainer: { optimizer: "adam", num_epochs: 1 },
}
"""
TEXTS = [("a good film .", "pos"), ("a bad film .", "neg"), ("good acting", "pos"), ("dull", "neg")]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python, environment, user directory) of a fresh venv with the wheel installed."""
    root = tmp_path_factory.mktemp("wheel")
    shutil.copytree(PROJECT_ROOT, root / "src", ignore=NOT_SOURCES)
    wheel = build_wheel(root / "src", root / "dist")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "shared_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(HOME=str(root), OMP_NUM_THREADS="1", PATH=f"{python.parent}:{env['PATH']}")
    # --ignore-installed: the running environment's elmo_plugin is visible and must stay.
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--ignore-installed",
            "-q",
            str(wheel),
        ],
        cwd=root,
        env=env,
    )
    # The `allennlp` script pip writes when it installs allennlp itself (shared here, not
    # installed).
    script = python.parent / "allennlp"
    script.write_text(
        f"#!{python}\nimport sys\nfrom allennlp.__main__ import run\nsys.exit(run())\n"
    )
    script.chmod(0o755)
    user = root / "user"
    user.mkdir()
    return python, env, user, Path(site)


def _run(command, cwd, env=None) -> str:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return result.stdout + result.stderr


def test_the_wheel_carries_configs_and_the_shipped_bilm_at_a_sensible_size(installed):
    _, _, _, site = installed
    package = site / "elmo_plugin"
    assert (package / "training_configs" / "common" / "elmo.libsonnet").is_file()
    assert (package / "training_configs" / "bilm" / "sample" / "wiki_train.txt.xz").is_file()
    shipped = package / "pretrained" / "elmo_wikipedia_512x128"
    names = {path.name for path in shipped.iterdir()}
    assert {"options.json", "weights.hdf5", "vocab.txt", "softmax.hdf5", "README.md"} <= names
    assert sum(path.stat().st_size for path in shipped.iterdir()) < 40 * 2**20


def test_from_outside_the_clone_python_embeds_trains_and_a_task_config_trains_by_name(installed):
    """A pip user's first steps, from their own directory: ElmoEmbedder() on the shipped biLM,
    train_model_from_file on a config importing our block, and a packaged task config named
    with data overrides."""
    python, env, user, _ = installed
    work = user / "python_user"
    work.mkdir()
    embed = (
        "from elmo_plugin import ElmoEmbedder; "
        "print(ElmoEmbedder().embed_sentence(['Hello', 'world']).shape)"
    )
    assert "(3, 2, 256)" in _run([str(python), "-c", embed], work, env)

    (work / "user.jsonnet").write_text(USER_CONFIG)
    (work / "train.jsonl").write_text(
        "".join(json.dumps({"text": text, "label": label}) + "\n" for text, label in TEXTS)
    )
    train = (
        "import elmo_plugin.allennlp\nfrom allennlp.commands.train import train_model_from_file\n"
        "train_model_from_file('user.jsonnet', 'run')"
    )
    _run([str(python), "-c", train], work, env)
    assert (work / "run" / "model.tar.gz").is_file()

    ner = FIXTURES / "ner"
    overrides = {
        "train_data_path": str(ner / "train.txt"),
        "validation_data_path": str(ner / "dev.txt"),
        "test_data_path": str(ner / "test.txt"),
        "trainer.num_epochs": 1,
    }
    _run(
        [
            str(python.parent / "allennlp"),
            "train",
            "elmo_plugin://training_configs/ner/ner_elmo.jsonnet",
            "-s",
            "ner",
            "-o",
            json.dumps(overrides),
            "--include-package",
            "elmo_plugin",
        ],
        work,
        env,
    )
    assert "test_f1-measure-overall" in json.loads((work / "ner" / "metrics.json").read_text())


def test_the_wheel_holds_elmo_plugin_alone_and_nothing_run_at_start_up(installed):
    """No .pth, no top-level module but the package: nothing of ours runs when Python starts."""
    _, _, _, site = installed
    record = next(site.glob("elmo_plugin-*.dist-info")) / "RECORD"
    # The console scripts are recorded as ../../../bin/<name>, outside site-packages.
    paths = [line.split(",")[0] for line in record.read_text().splitlines()]
    tops = {path.split("/")[0] for path in paths if not path.startswith("..")}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"elmo_plugin"}
    assert not [line for line in record.read_text().splitlines() if ".pth," in line]


def test_from_outside_the_clone_commands_train_embed_and_predict_without_the_bilm(installed):
    python, env, user, site = installed
    allennlp = [str(python.parent / "allennlp")]
    plugin = ["--include-package", "elmo_plugin"]
    for command in ["elmo-embed", "elmo-export", "elmo-perplexity"]:
        assert f"usage: {command}" in _run([str(python.parent / command), "--help"], user, env)
    assert "/site-packages/elmo_plugin/" in _run(
        [str(python), "-c", "import elmo_plugin; print(elmo_plugin.__file__)"], user, env
    )

    (user / "sentences.txt").write_text("a good film .\nthe cat sat\n")
    _run(
        [
            str(python.parent / "elmo-embed"),
            "sentences.txt",
            "vectors.hdf5",
            "--options-file",
            "elmo_plugin://pretrained/elmo_wikipedia_512x128/options.json",
            "--weight-file",
            "elmo_plugin://pretrained/elmo_wikipedia_512x128/weights.hdf5",
        ],
        user,
        env,
    )
    with h5py.File(user / "vectors.hdf5", "r") as vectors:
        assert vectors["0"].shape == (3, 4, 256)
    _run(
        [
            str(python.parent / "elmo-perplexity"),
            "elmo_plugin://pretrained/elmo_wikipedia_512x128",
            "sentences.txt",
            "--output-file",
            "perplexity.json",
        ],
        user,
        env,
    )
    perplexity = json.loads((user / "perplexity.json").read_text())
    assert 1 < perplexity["forward_perplexity"] < perplexity["perplexity"] * 10

    (user / "user.jsonnet").write_text(USER_CONFIG)
    (user / "train.jsonl").write_text(
        "".join(json.dumps({"text": text, "label": label}) + "\n" for text, label in TEXTS)
    )
    _run(allennlp + ["train", "user.jsonnet", "-s", "run", *plugin], user, env)
    (user / "predict.jsonl").write_text(
        "".join(json.dumps({"sentence": t}) + "\n" for t, _ in TEXTS)
    )
    predict = allennlp + ["predict", "run/model.tar.gz", "predict.jsonl", "--output-file"]
    _run(predict + ["before.jsonl", "--silent", *plugin], user, env)

    shutil.rmtree(site / "elmo_plugin" / "pretrained" / "elmo_wikipedia_512x128")
    elsewhere = user / "elsewhere"
    elsewhere.mkdir()
    _run(
        predict[:2]
        + ["../run/model.tar.gz", "../predict.jsonl", "--output-file", "after.jsonl", "--silent"]
        + plugin,
        elsewhere,
        env,
    )
    before = [
        json.loads(line)["probs"] for line in (user / "before.jsonl").read_text().splitlines()
    ]
    after = [
        json.loads(line)["probs"] for line in (elsewhere / "after.jsonl").read_text().splitlines()
    ]
    assert after == before

    _run(
        allennlp
        + ["evaluate", "../run/model.tar.gz", "../train.jsonl", "--output-file", "metrics.json"]
        + plugin,
        elsewhere,
        env,
    )
    assert "accuracy" in json.loads((elsewhere / "metrics.json").read_text())
    _run(
        [
            str(python.parent / "elmo-embed"),
            "../sentences.txt",
            "from_archive.hdf5",
            "--archive",
            "../run/model.tar.gz",
        ],
        elsewhere,
        env,
    )
    with h5py.File(user / "vectors.hdf5", "r") as shipped, h5py.File(
        elsewhere / "from_archive.hdf5", "r"
    ) as archived:
        for key in ("0", "1"):
            assert (archived[key][...] == shipped[key][...]).all()


def test_the_installed_command_refuses_an_archive_that_writes_outside(installed, tmp_path):
    import io
    import tarfile

    python, env, user, _ = installed
    outside = tmp_path / "outside"
    outside.mkdir()
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as evil:
        for name in ("config.json", "../" * 12 + str(outside / "pwned.txt").lstrip("/")):
            info = tarfile.TarInfo(name)
            info.size = 2
            evil.addfile(info, io.BytesIO(b"{}"))
    (user / "one.jsonl").write_text('{"sentence": "a"}\n')
    result = subprocess.run(
        [str(python.parent / "allennlp"), "predict", str(archive), "one.jsonl"]
        + ["--include-package", "elmo_plugin"],
        cwd=user,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0 and "evil.tar.gz: member" in result.stderr, result.stderr[-3000:]
    assert list(outside.iterdir()) == []
