"""The packaged configs read their data under the folder a user names in ELMO_PLUGIN_DATA (or
the files named by overrides), never a folder the user did not name; unset, a reader's error
names the variable, the overrides and the files expected (elmo_plugin/allennlp/data_paths.py)."""

import glob
import json
import os

import pytest
from allennlp.common import Params, params

from elmo_plugin.allennlp.data_paths import DATA_OVERRIDES, DATA_VARIABLE, data_files
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.ner.dataset_readers.conll2003_ner import Conll2003NerReader
from elmo_plugin.allennlp.tasks.reading import check_data_file
from tests.paths import TRAINING_CONFIGS

PACKAGED_NER = "elmo_plugin://training_configs/ner/ner_elmo.jsonnet"
# One config of each task folder (each imports its task's block, which imports the data block).
_CONFIGS = sorted(glob.glob(str(TRAINING_CONFIGS / "*" / "*.jsonnet")))
TASK_CONFIGS = sorted({os.path.dirname(config): config for config in _CONFIGS}.values())


def _strings(value):
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("config", TASK_CONFIGS, ids=os.path.basename)
def test_unset_no_packaged_config_reads_a_folder_the_user_did_not_name(config, monkeypatch):
    monkeypatch.delenv(DATA_VARIABLE, raising=False)
    evaluated = Params.from_file(config).as_dict()
    assert not [s for s in _strings(evaluated) if "shared/data" in s]
    paths = [value for key, value in evaluated.items() if key.endswith("data_path")]
    # the few configs sized for the clone's fixtures read them; the rest the folder named
    assert all(path.startswith(("$ELMO_PLUGIN_DATA/", "fixtures/")) for path in paths), paths


@pytest.mark.parametrize("folder", ["/data", "/data/"])
def test_the_paths_are_under_the_folder_named(folder, monkeypatch):
    monkeypatch.setenv(DATA_VARIABLE, folder)
    config = Params.from_file(PACKAGED_NER).as_dict()
    assert config["train_data_path"] == "/data/conll2003/train.txt"
    assert config["test_data_path"] == "/data/conll2003/test.txt"


def test_the_project_folder_gives_the_paths_it_gave_before_the_variable(monkeypatch):
    """The project's runs set ../shared/data: their evaluated configs, and so the records'
    digests (experiments/configs.py), are what they were when it was written in the config."""
    monkeypatch.delenv(DATA_VARIABLE, raising=False)
    config = json.loads(
        params.evaluate_file(
            str(TRAINING_CONFIGS / "ner" / "ner_elmo.jsonnet"),
            ext_vars={DATA_VARIABLE: "../shared/data"},
        )
    )
    assert config["train_data_path"] == "../shared/data/conll2003/train.txt"
    assert data_files("../shared/data")["lm"]["train"] == (
        "../shared/data/lm_wikipedia_en_2015/tokenized/train/*.txt.xz"
    )


def test_overrides_name_the_files_without_the_variable(monkeypatch):
    monkeypatch.delenv(DATA_VARIABLE, raising=False)
    overrides = json.dumps({"train_data_path": "mine.txt"})
    assert Params.from_file(PACKAGED_NER, overrides)["train_data_path"] == "mine.txt"


def test_unset_a_reader_names_the_variable_the_files_and_the_overrides(monkeypatch):
    monkeypatch.delenv(DATA_VARIABLE, raising=False)
    train = Params.from_file(PACKAGED_NER)["train_data_path"]
    with pytest.raises(ConfigurationError) as error:
        list(Conll2003NerReader().read(train))
    message = str(error.value)
    assert DATA_VARIABLE in message and DATA_OVERRIDES in message
    assert "conll2003/train.txt, conll2003/dev.txt, conll2003/test.txt" in message


def test_set_a_missing_file_names_the_files_expected_under_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_VARIABLE, str(tmp_path))
    train = Params.from_file("elmo_plugin://training_configs/snli/snli_elmo_input.jsonnet")[
        "train_data_path"
    ]
    with pytest.raises(ConfigurationError) as error:
        check_data_file(train)
    message = str(error.value)
    assert f"{DATA_VARIABLE}={tmp_path}" in message
    assert "snli_1.0/split/train.jsonl, snli_1.0/split/dev.jsonl" in message


def test_unset_the_bilm_corpus_names_the_variable_and_the_corpus_files(monkeypatch):
    from elmo_plugin.allennlp.lm.dataset_readers.bilm_corpus import BilmCorpusReader

    monkeypatch.delenv(DATA_VARIABLE, raising=False)
    train = Params.from_file("elmo_plugin://training_configs/bilm/bilm_wikipedia_cpu.jsonnet")[
        "train_data_path"
    ]
    with pytest.raises(ConfigurationError) as error:
        list(BilmCorpusReader().read(train))
    assert DATA_VARIABLE in str(error.value)
    assert "lm_wikipedia_en_2015/tokenized/train/*.txt.xz, " in str(error.value)
