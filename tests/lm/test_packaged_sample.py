"""The packaged `bilm_tiny` config runs from any directory, as from a pip install: its corpus
is the sample installed with the package, named by `elmo_plugin://`, not a file of the clone.
Read here, not trained (the training tests train it)."""

import pytest
from allennlp.common import Params

import elmo_plugin.allennlp  # noqa: F401  (resolves elmo_plugin:// config names)
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.lm.corpus import corpus_files
from elmo_plugin.allennlp.lm.dataset_readers import BilmCorpusReader

CONFIG = "elmo_plugin://training_configs/bilm/bilm_tiny.jsonnet"


def test_the_tiny_config_reads_its_packaged_sample_outside_the_clone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    params = Params.from_file(CONFIG)
    corpus = params["vocabulary"]["corpus"]
    assert corpus == params["train_data_path"] and corpus.startswith("elmo_plugin://")
    assert len(corpus_files(corpus)) == 1
    held_out = list(BilmCorpusReader().read(params["validation_data_path"]))
    assert len(held_out) == 200


def test_a_missing_package_file_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError, match="sample/nothing.txt"):
        corpus_files("elmo_plugin://training_configs/bilm/sample/nothing.txt")
