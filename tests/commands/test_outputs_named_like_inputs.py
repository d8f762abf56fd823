"""An output that is an input, however either is named (`elmo_plugin://...` included), is refused
before any work: no command writes over the shipped biLM's files."""

import sys

import pytest
from allennlp.commands import main

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import SHIPPED_BILM, local_path
from elmo_plugin.embedding import cli
from tests.paths import FIXTURES

SHIPPED_WEIGHTS = str(local_path(f"{SHIPPED_BILM}/weights.hdf5"))
SHIPPED_VOCABULARY = str(local_path(f"{SHIPPED_BILM}/vocab.txt"))


def test_elmo_embed_refuses_to_write_over_the_shipped_weights_named_by_package(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the check must come before the embedding")

    monkeypatch.setattr(cli, "embed", never)
    sentences = str(FIXTURES / "lm" / "sentences.txt")
    for bilm in (["--model", SHIPPED_BILM], []):
        with pytest.raises(SystemExit) as exit_:
            cli.main([sentences, SHIPPED_WEIGHTS, *bilm])
        assert exit_.value.code == 2


def test_elmo_perplexity_refuses_to_write_over_the_shipped_vocabulary(monkeypatch):
    from elmo_plugin.allennlp.lm import perplexity

    def never(*args, **kwargs):
        raise AssertionError("the check must come before the evaluation")

    monkeypatch.setattr(perplexity, "export_perplexity", never)
    argv = ["allennlp", "elmo-perplexity", SHIPPED_BILM, str(FIXTURES / "lm" / "sentences.txt")]
    monkeypatch.setattr(sys, "argv", argv + ["--output-file", SHIPPED_VOCABULARY])
    with pytest.raises(ConfigurationError, match="would destroy"):
        main()
