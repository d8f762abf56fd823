"""What a user outside the clone relies on: one import registers everything, the plugin changes
the allennlp command only in that command, and no command tries the network."""

import json
import os
import subprocess
import sys

import pytest

from tests.paths import FIXTURES, PROJECT_ROOT
from tests.profile_archives import ARCHIVES, profile_of_this_process

# Trains, builds a wheel or runs AllenNLP in a process of its own: `make test-fast` leaves it out.
pytestmark = pytest.mark.slow

OFFLINE_TRAIN = """
import sys
def no_network(event, args):
    if event in ("socket.connect", "socket.getaddrinfo"):
        raise RuntimeError(f"network access tried: {event} {args}")
sys.addaudithook(no_network)
from allennlp.__main__ import run
sys.argv = ["allennlp", "train", sys.argv[1], "-s", sys.argv[2], "--include-package", "elmo_plugin"]
run()
"""

CONFIG = {
    "dataset_reader": {
        "type": "text_classification_json",
        "tokenizer": {"type": "whitespace"},
        "token_indexers": {"tokens": {"type": "single_id"}, "elmo": {"type": "elmo_characters"}},
    },
    "train_data_path": "train.jsonl",
    "model": {
        "type": "basic_classifier",
        "text_field_embedder": {
            "token_embedders": {
                "tokens": {"type": "empty"},
                "elmo": {
                    "type": "elmo",
                    "options_file": os.path.join(FIXTURES, "elmo", "options.json"),
                },
            }
        },
        "seq2vec_encoder": {"type": "boe", "embedding_dim": 32},
    },
    "data_loader": {"batch_size": 2},
    "trainer": {"optimizer": "adam", "num_epochs": 1},
}


def _python(code: str, *args: str, cwd=PROJECT_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True
    )


def test_import_elmo_plugin_registers_the_tasks_and_changes_nothing_else():
    code = (
        "import os, sys\n"
        "from allennlp.data import DatasetReader; from allennlp.models import Model\n"
        "from allennlp.predictors import Predictor; import allennlp.training, h5py\n"
        "from allennlp.models import archival; extract = archival.extracted_archive\n"
        "environ, finders = dict(os.environ), list(sys.meta_path)\n"
        "import elmo_plugin\n"
        "DatasetReader.by_name('squad_v1'); Model.by_name('bidaf_rc')\n"
        "Predictor.by_name('squad_answer')\n"
        "Model.by_name('esim_nli'); Model.by_name('bilstm_crf_tagger'); Model.by_name('deep_srl')\n"
        "Model.by_name('bcn_classifier'); Predictor.by_name('sentence_sentiment')\n"
        "DatasetReader.by_name('litbank_coref'); Model.by_name('span_ranking_coref')\n"
        "Predictor.by_name('coref_clusters')\n"
        "assert dict(os.environ) == environ and sys.meta_path == finders\n"
        "# only the allennlp command checks archives\n"
        "assert archival.extracted_archive is extract\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr[-3000:]


def test_import_elmo_plugin_alone_imports_no_allennlp_and_the_layer_registers():
    code = (
        "import sys\n"
        "import elmo_plugin\n"
        "assert not any(name.split('.')[0] == 'allennlp' for name in sys.modules), 'imported'\n"
        "import elmo_plugin.allennlp\n"
        "from allennlp.models import Model; Model.by_name('bilm')\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_command_changes_are_made_only_in_the_allennlp_command():
    from elmo_plugin.allennlp.framework import runs_allennlp

    assert runs_allennlp(["/venv/bin/allennlp", "train"])
    assert runs_allennlp(["/venv/lib/python3.12/site-packages/allennlp/__main__.py", "--help"])
    assert not runs_allennlp(["-c"])
    assert not runs_allennlp(["/venv/lib/python3.12/site-packages/pytest/__main__.py"])
    assert not runs_allennlp([])


def test_allennlp_train_with_the_plugin_tries_no_network_and_no_nltk_download(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    (tmp_path / "train.jsonl").write_text(
        json.dumps({"text": "a good film", "label": "pos"})
        + "\n"
        + json.dumps({"text": "bad", "label": "neg"})
        + "\n"
    )
    result = _python(OFFLINE_TRAIN, "config.json", "run", cwd=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    assert "network access tried" not in output and "[nltk_data]" not in output
    assert (tmp_path / "run" / "model.tar.gz").is_file()


def test_our_imports_warn_nothing_and_take_a_small_part_of_the_start_up():
    code = (
        "import time, warnings\n"
        "start = time.monotonic()\n"
        "import allennlp.commands, allennlp.models, allennlp.training, allennlp.data\n"
        "ours = time.monotonic()\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import elmo_plugin\n"
        "end = time.monotonic()\n"
        "print([f'{w.filename}: {w.message}' for w in caught])\n"
        "print(ours - start, end - ours)\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr[-3000:]
    warned, times = result.stdout.strip().splitlines()[-2:]
    assert warned == "[]"
    allennlp_s, ours_s = map(float, times.split())
    assert ours_s < 0.25 * allennlp_s, (allennlp_s, ours_s)


SILENT_PREDICT = """
import sys
from allennlp.__main__ import run
sys.argv = ["allennlp", *sys.argv[1:]]
run()
"""


def test_predict_silent_prints_nothing_with_include_package(tmp_path):
    # From a user directory with no plugins file, as after a wheel install (the archive names
    # its biLM's options as fixtures/..., relative to the clone). AllenNLP's dependencies'
    # FutureWarnings, printed while `allennlp.commands` imports before any plugin loads, are
    # theirs (docs/known_limits.md): silenced here as that page says.
    (tmp_path / "fixtures").symlink_to(FIXTURES)
    (tmp_path / "in.jsonl").write_text(json.dumps({"tokens": ["EU", "rejects", "it"]}) + "\n")
    archive = os.path.join(ARCHIVES, profile_of_this_process(), "model.tar.gz")
    predict = ["predict", archive, "in.jsonl", "--output-file", "out.jsonl", "--silent"]
    result = subprocess.run(
        [sys.executable, "-W", "ignore::FutureWarning", "-c", SILENT_PREDICT, *predict]
        + ["--include-package", "elmo_plugin"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr[-3000:]
    assert json.loads((tmp_path / "out.jsonl").read_text())["tokens"] == ["EU", "rejects", "it"]


def test_import_elmo_plugin_alone_warns_nothing_even_under_w_always():
    # What a user sees first: AllenNLP's imports too (their dependencies' deprecations).
    result = subprocess.run(
        [sys.executable, "-W", "always", "-c", "import elmo_plugin"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr[-3000:]
