"""Configs importing our blocks load from Python after `import elmo_plugin`, from a user's own
directory outside the clone, as they do under the `allennlp` command."""

import json
import os
import subprocess
import sys

import pytest

from elmo_plugin.allennlp.framework import CONFIG_LOADER, install
from tests.paths import FIXTURES, PROJECT_ROOT

# Trains, builds a wheel or runs AllenNLP in a process of its own: `make test-fast` leaves it out.
pytestmark = pytest.mark.slow

USER_CONFIG = """
local elmo = (import "elmo_plugin/training_configs/common/elmo.libsonnet") + {
  options_file: std.extVar("OPTIONS"), weight_file: std.extVar("WEIGHTS"),
};
{
  dataset_reader: {
    type: "text_classification_json",
    tokenizer: { type: "whitespace" },
    token_indexers: elmo.indexers,
  },
  train_data_path: "train.jsonl",
  model: {
    type: "basic_classifier",
    text_field_embedder: { token_embedders: elmo.embedders(elmo.embedder(cache=false)) },
    seq2vec_encoder: { type: "boe", embedding_dim: 32 },
  },
  data_loader: { batch_size: 2 },
  trainer: { optimizer: "adam", num_epochs: 1 },
}
"""

LOAD_AND_TRAIN = """
import sys
IMPORT_PLUGIN
from allennlp.common import Params
from allennlp.commands.train import train_model_from_file
ext_vars = {"OPTIONS": sys.argv[1], "WEIGHTS": sys.argv[2]}
params = Params.from_file("config.jsonnet", ext_vars=ext_vars)
print("embedder", params["model"]["text_field_embedder"]["token_embedders"]["elmo"]["type"])
import os
os.environ.update(ext_vars)  # train_model_from_file reads ext_vars from the environment
train_model_from_file("config.jsonnet", "run")
print("trained", os.path.isfile("run/model.tar.gz"))
"""


def _user_directory(tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    (user / "config.jsonnet").write_text(USER_CONFIG)
    (user / "train.jsonl").write_text(
        json.dumps({"text": "a good film", "label": "pos"})
        + "\n"
        + json.dumps({"text": "bad", "label": "neg"})
        + "\n"
    )
    return user


def _run(code, user):
    # The checkout on the import path, as an install puts the package there; the user's
    # directory is outside it.
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), OMP_NUM_THREADS="1")
    fixture = os.path.join(FIXTURES, "elmo")
    return subprocess.run(
        [sys.executable, "-c", code, f"{fixture}/options.json", f"{fixture}/lm_weights.hdf5"],
        cwd=user,
        env=env,
        capture_output=True,
        text=True,
    )


def test_params_from_file_and_train_model_from_file_resolve_our_blocks_after_import(tmp_path):
    user = _user_directory(tmp_path)
    assert not str(user).startswith(str(PROJECT_ROOT))
    result = _run(LOAD_AND_TRAIN.replace("IMPORT_PLUGIN", "import elmo_plugin.allennlp"), user)
    assert result.returncode == 0, result.stderr[-5000:]
    assert "embedder elmo" in result.stdout and "trained True" in result.stdout


def test_without_the_import_the_block_is_not_found(tmp_path):
    user = _user_directory(tmp_path)
    result = _run(LOAD_AND_TRAIN.replace("IMPORT_PLUGIN", ""), user)
    assert result.returncode != 0
    assert "couldn't open import" in result.stderr and "elmo.libsonnet" in result.stderr


def test_the_wrapper_is_idempotent():
    from allennlp.common import params

    install(CONFIG_LOADER)
    wrapped = params.evaluate_file, params.evaluate_snippet, params.cached_path
    install(CONFIG_LOADER)
    assert (params.evaluate_file, params.evaluate_snippet, params.cached_path) == wrapped


BLOCK = "elmo_plugin/training_configs/common/elmo.libsonnet"


def _evaluate(snippet, **kwargs):
    from allennlp.common import params

    install(CONFIG_LOADER)
    return json.loads(params.evaluate_snippet("snippet", snippet, **kwargs))


def test_a_packaged_block_resolves_in_the_top_level_training_configs():
    assert _evaluate(f'(import "{BLOCK}").output_dim') == 256  # the shipped biLM's options
    assert (PROJECT_ROOT / "training_configs" / "common" / "elmo.libsonnet").is_file()
    assert not (PROJECT_ROOT / "elmo_plugin" / "training_configs").exists()


def test_a_callers_library_dir_and_the_importing_directory_win_over_the_package(tmp_path):
    mine = tmp_path / "mine"
    (mine / "elmo_plugin" / "training_configs" / "common").mkdir(parents=True)
    (mine / BLOCK).write_text('{ output_dim: "mine" }')
    assert _evaluate(f'(import "{BLOCK}").output_dim', jpathdir=str(mine)) == "mine"
    (tmp_path / "elmo_plugin").symlink_to(mine / "elmo_plugin")
    config = tmp_path / "config.jsonnet"
    config.write_text(f'(import "{BLOCK}").output_dim')
    from allennlp.common import params

    assert json.loads(params.evaluate_file(str(config))) == "mine"


def test_a_missing_import_names_the_file():
    with pytest.raises(RuntimeError) as error:
        _evaluate('import "elmo_plugin/training_configs/common/nothing.libsonnet"')
    assert "couldn't open import" in str(error.value) and "nothing.libsonnet" in str(error.value)


@pytest.mark.parametrize(
    "name",
    [
        "elmo_plugin://training_configs/../../../../../../etc/hostname",
        "elmo_plugin://training_configs/../pretrained/elmo_wikipedia_512x128/options.json",
        "elmo_plugin:///etc/hostname",
    ],
)
def test_a_packaged_config_name_cannot_leave_the_configs(name):
    from allennlp.common import Params

    from elmo_plugin.elmo.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        Params.from_file(name)


def test_the_import_changes_only_allennlp_params_config_file_functions(tmp_path):
    code = (
        "from allennlp.common import params\n"
        "before = dict(vars(params))\n"
        "import elmo_plugin\n"
        "changed = sorted(k for k, v in vars(params).items() if before.get(k) is not v)\n"
        "print(changed)\n"
    )
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (
        result.stdout.strip().splitlines()[-1]
        == "['cached_path', 'evaluate_file', 'evaluate_snippet']"
    )


PACKAGED_NER = "elmo_plugin://training_configs/ner/ner_elmo.jsonnet"
NER_ELMO = "model.text_field_embedder.token_embedders.elmo"


def _allennlp(monkeypatch, *args):
    from allennlp.commands import main

    monkeypatch.setattr(sys, "argv", ["allennlp", *args])
    main()


def test_a_packaged_task_config_trains_by_name_with_data_overrides(tmp_path, monkeypatch):
    from tests.tasks.ner.ner_small_overrides import SMALL

    monkeypatch.chdir(tmp_path)  # a user's directory: the data and the biLM named absolutely
    overrides = dict(SMALL)
    for key in ("train_data_path", "validation_data_path", "test_data_path"):
        overrides[key] = os.path.join(PROJECT_ROOT, SMALL[key])
    fixture = os.path.join(FIXTURES, "elmo")
    overrides[f"{NER_ELMO}.options_file"] = f"{fixture}/options.json"
    overrides[f"{NER_ELMO}.weight_file"] = f"{fixture}/lm_weights.hdf5"
    _allennlp(monkeypatch, "train", PACKAGED_NER, "-s", "run", "-o", json.dumps(overrides))
    assert (tmp_path / "run" / "model.tar.gz").is_file()


def test_without_data_named_the_error_names_the_variable_files_and_overrides(tmp_path, monkeypatch):
    from elmo_plugin.elmo.errors import ConfigurationError

    sibling = tmp_path / "shared" / "data" / "conll2003"
    sibling.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        (sibling / f"{split}.txt").write_text((FIXTURES / "ner" / "train.txt").read_text())
    (tmp_path / "user").mkdir()
    monkeypatch.chdir(tmp_path / "user")  # beside a ../shared/data the user did not name
    monkeypatch.delenv("ELMO_PLUGIN_DATA", raising=False)
    with pytest.raises(ConfigurationError) as error:
        _allennlp(monkeypatch, "train", PACKAGED_NER, "-s", "run")
    message = str(error.value)
    assert message.startswith("$ELMO_PLUGIN_DATA/conll2003/train.txt: no data folder named")
    assert "export ELMO_PLUGIN_DATA=/path/to/data" in message
    assert "conll2003/train.txt, conll2003/dev.txt, conll2003/test.txt" in message
    assert (
        '-o \'{"train_data_path": "...", "validation_data_path": "...", "test_data_path": "..."}\''
        in message
    )


def test_an_unknown_packaged_config_lists_the_task_configs():
    from allennlp.common import Params

    from elmo_plugin.elmo.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as error:
        Params.from_file("elmo_plugin://training_configs/ner/ner.jsonnet")
    message = str(error.value)
    assert "no such packaged config" in message
    assert (
        PACKAGED_NER in message
        and "elmo_plugin://training_configs/squad/squad_elmo.jsonnet" in message
    )
