"""
Each entry point that checks a biLM's name before the work (`ElmoEmbedder`, `elmo-embed`,
`elmo-export`) resolves it once: the files it checked are the files it reads, and a name that
means a download or an unpacked archive is not looked up twice.
"""

import os

import pytest

from elmo_plugin.allennlp.commands.elmo_export import export_bilm_files, export_onnx_model
from elmo_plugin.embedding import cli
from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder
from tests.elmo.test_bilm_readers import TINY_OPTIONS, TINY_WEIGHTS, _count_resolutions

BILM = (str(TINY_OPTIONS), str(TINY_WEIGHTS))


def test_elmo_embedder_resolves_its_biLM_once(monkeypatch):
    resolutions = _count_resolutions(monkeypatch)
    ElmoEmbedder(BILM[0], BILM[1])
    assert resolutions == [BILM[0]]


def test_elmo_embed_resolves_its_biLM_once(tmp_path, monkeypatch):
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("The cat sat .\n")
    resolutions = _count_resolutions(monkeypatch)
    cli.main(
        [str(sentences), str(tmp_path / "out.hdf5"), "--options-file", BILM[0]]
        + ["--weight-file", BILM[1], "--threads", "1"]
    )
    assert resolutions == [BILM[0]]
    assert (tmp_path / "out.hdf5").is_file()


def test_elmo_export_resolves_its_biLM_once(tmp_path, monkeypatch):
    resolutions = _count_resolutions(monkeypatch)
    written = export_bilm_files(BILM[0], str(tmp_path / "bilm_tf"), BILM[1])
    assert resolutions == [BILM[0]]
    assert all(os.path.isfile(path) for path in written)


def test_elmo_export_onnx_resolves_its_biLM_once(tmp_path, monkeypatch):
    pytest.importorskip("onnx")
    resolutions = _count_resolutions(monkeypatch)
    export_onnx_model(BILM[0], str(tmp_path / "onnx"), BILM[1])
    assert resolutions == [BILM[0]]
