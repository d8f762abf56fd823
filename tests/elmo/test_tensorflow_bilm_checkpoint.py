"""bilm-tf's training checkpoint folders loaded as biLMs wherever a biLM is named: the three
layers equal bilm-tf's own inference graph over the weights `dump_weights` wrote from the
same checkpoint (stored by fixtures/tensorflow/make_bilm_checkpoint.py), to 1e-5."""

import json
import os
import shutil
import zipfile

import h5py
import numpy
import pytest

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.embedding import cli
from tests.paths import FIXTURES
from tests.tensorflow_reference import (
    STORED,
    TENSORS_AND_LAYERS,
    assert_layers_are_bilm_tfs,
    sentences,
)

FOLDER = FIXTURES / "tensorflow" / "bilm_checkpoint"
STEP = "model.ckpt-74"
REFERENCE = numpy.load(STORED / TENSORS_AND_LAYERS)
SENTENCES = sentences()


def test_the_folders_latest_checkpoint_gives_bilm_tfs_layers():
    state = (FOLDER / "checkpoint").read_text()
    named = state.split('"')[1]
    assert os.path.isabs(named) and not os.path.exists(named)  # the training machine's path
    assert_layers_are_bilm_tfs(ElmoEmbedder(FOLDER))


def test_one_checkpoint_is_named_by_its_prefix():
    assert_layers_are_bilm_tfs(ElmoEmbedder(FOLDER / STEP))


def test_a_zip_of_the_folder_is_read_in_place(tmp_path):
    archive = tmp_path / "212.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as opened:
        for path in FOLDER.iterdir():
            opened.write(path, f"checkpoint_folder/{path.name}")
    assert_layers_are_bilm_tfs(ElmoEmbedder(archive))


def test_load_bilm_and_elmo_embed_name_the_folder(tmp_path):
    bilm = load_bilm(FOLDER, None)
    assert bilm.options()["char_cnn"]["n_characters"] == 261  # bilm-tf's for training
    assert bilm.character_encoder.char_embedding.shape[0] == 262  # a zero row for masking
    text = tmp_path / "in.txt"
    text.write_text(" ".join(SENTENCES[0]) + "\n", encoding="utf-8")
    cli.main([str(text), str(tmp_path / "out.hdf5"), "--model", str(FOLDER)])
    with h5py.File(tmp_path / "out.hdf5", "r") as handle:
        embedded = handle["0"][()]
    numpy.testing.assert_allclose(embedded, REFERENCE["layers"][0, :, :7], atol=1e-5, rtol=0)


def _copy(tmp_path):
    folder = tmp_path / "save"
    shutil.copytree(FOLDER, folder)
    return folder


def test_a_checkpoint_file_naming_a_missing_step_lists_those_there(tmp_path):
    folder = _copy(tmp_path)
    (folder / "checkpoint").write_text('model_checkpoint_path: "/home/me/save/model.ckpt-99"\n')
    with pytest.raises(MissingFileError, match=r"no model.ckpt-99.index.*\['model.ckpt-74'\]"):
        ElmoEmbedder(folder)


def test_a_malformed_checkpoint_file_names_its_line(tmp_path):
    folder = _copy(tmp_path)
    (folder / "checkpoint").write_text('model_checkpoint_path: "x"\nthis is not it\n')
    with pytest.raises(ConfigurationError, match=r"checkpoint, line 2: expected"):
        ElmoEmbedder(folder)


def test_options_that_are_not_the_checkpoints_are_refused(tmp_path):
    folder = _copy(tmp_path)
    options = json.loads((folder / "options.json").read_text())
    options["lstm"]["n_layers"] = 1
    (folder / "options.json").write_text(json.dumps(options))
    with pytest.raises(ConfigurationError, match="options do not describe"):
        ElmoEmbedder(folder)
    options["lstm"]["n_layers"] = 3
    (folder / "options.json").write_text(json.dumps(options))
    with pytest.raises(
        ConfigurationError, match=r"holds no biLM variable for bilm-tf's 'RNN_0/.*Cell2"
    ):
        ElmoEmbedder(folder)
