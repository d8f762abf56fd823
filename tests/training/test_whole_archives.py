"""`allennlp train` with the plugin writes `model.tar.gz` whole (a kill or Ctrl-C while it is
written leaves no truncated archive), and `--recover` of a finished run keeps its metrics.json."""

import json
import os
import tarfile
from unittest import mock

import pytest
from allennlp.models.archival import load_archive

from tests.lm.conftest import TINY_BILM, one_file_corpus, run_allennlp

CONFIG = "training_configs/bilm/bilm_tiny.jsonnet"
SENTENCES = "fixtures/lm/sentences.txt"


@pytest.fixture(autouse=True)
def _in_the_command(command_changes):
    command_changes()  # what the allennlp command makes when it loads the plugin


OVERRIDES = json.dumps(
    {
        **one_file_corpus(SENTENCES),
        "model.bilm": TINY_BILM,
        "model.num_samples": 50,
        "trainer.num_epochs": 1,
    }
)


def test_an_interrupted_archive_leaves_none_and_recover_keeps_the_metrics(tmp_path):
    run = tmp_path / "run"
    real_add = tarfile.TarFile.add

    def interrupted(self, name, *args, **kwargs):
        if "vocabulary" in str(name):
            raise KeyboardInterrupt  # Ctrl-C halfway through the archive
        return real_add(self, name, *args, **kwargs)

    with mock.patch.object(tarfile.TarFile, "add", interrupted), pytest.raises(KeyboardInterrupt):
        run_allennlp("train", CONFIG, "-s", str(run), "-o", OVERRIDES)
    metrics = json.loads((run / "metrics.json").read_text())
    assert "training_loss" in metrics and "validation_loss" in metrics
    assert not (run / "model.tar.gz").exists()  # not a truncated one
    assert not [name for name in os.listdir(run) if name.endswith(".partial")]

    run_allennlp("train", CONFIG, "-s", str(run), "-o", OVERRIDES, "--recover")
    recovered = json.loads((run / "metrics.json").read_text())
    assert {key: recovered.get(key) for key in metrics} == metrics
    assert load_archive(str(run / "model.tar.gz")).model is not None
