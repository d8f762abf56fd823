"""TF1 Hub modules (TF-Hub's `google/elmo` format) loaded without TensorFlow: a module written
by tensorflow-hub 0.15.0's own export around bilm-tf's graph (fixtures/tensorflow/
make_hub_module.py) gives bilm-tf's three layers and the module's own `elmo` and `default`
outputs, to 1e-5."""

import logging
import shutil
import tarfile
import zipfile

import pytest

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.bilm_tf_options import read_options
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.elmo.formats.naming import tar_archives
from elmo_plugin.elmo.formats.tensorflow.hub_module import module_aggregation
from tests.tensorflow_reference import (
    STORED,
    assert_layers_are_bilm_tfs,
    assert_module_outputs_are_hubs,
)

MODULE = STORED / "hub_module"


def test_a_module_folder_gives_bilm_tfs_layers():
    assert_layers_are_bilm_tfs(ElmoEmbedder(MODULE))


def test_a_zip_holding_the_module_is_read_in_place(tmp_path):
    archive = tmp_path / "deeppavlov.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as opened:
        for path in MODULE.rglob("*"):
            if path.is_file():
                opened.write(path, f"module/{path.relative_to(MODULE)}")
    assert_layers_are_bilm_tfs(ElmoEmbedder(archive))


def test_sizes_come_from_the_shapes_and_constants_are_logged(caplog):
    with caplog.at_level(logging.INFO):
        bilm = load_bilm(MODULE, None)
    trained = read_options(str(STORED / "bilm_checkpoint" / "options.json"))
    options = bilm.options()
    for section, keys in {
        "char_cnn": ["embedding", "filters", "n_highway", "activation"],
        "lstm": ["dim", "projection_dim", "n_layers", "cell_clip", "proj_clip"],
    }.items():
        for key in keys:
            assert options[section][key] == trained[section][key], key
    assert options["char_cnn"]["n_characters"] == 262
    assert "not read from saved_model.pb" in caplog.text


def test_the_modules_outputs_equal_its_own():
    bilm = load_bilm(MODULE, None).eval()
    assert_module_outputs_are_hubs(bilm, module_aggregation(str(MODULE)))


def test_a_module_without_aggregation_or_with_another_graph_is_refused(tmp_path):
    module = tmp_path / "module"
    shutil.copytree(MODULE, module)
    (module / "variables" / "variables.index").write_bytes(
        (STORED / "bilm_checkpoint" / "model.ckpt-74.index").read_bytes()
    )
    with pytest.raises(ConfigurationError, match="holds no biLM variable for bilm-tf's"):
        ElmoEmbedder(module)
    with pytest.raises(ConfigurationError, match="has no aggregation/weights"):
        module_aggregation(str(module))


@pytest.fixture
def unpacked_into(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setattr(tar_archives, "_UNPACKED_DIRECTORY", str(cache))
    return cache


def test_a_tar_gz_module_is_unpacked_once_into_the_cache(tmp_path, unpacked_into):
    archive = tmp_path / "elmo_3.tar.gz"
    with tarfile.open(archive, "w:gz") as opened:
        for path in sorted(MODULE.rglob("*")):
            opened.add(path, str(path.relative_to(MODULE)), recursive=False)
    assert_layers_are_bilm_tfs(ElmoEmbedder(archive))
    (folder,) = unpacked_into.iterdir()
    assert (folder / "tfhub_module.pb").is_file() and archive.is_file()
    ElmoEmbedder(archive)
    assert list(unpacked_into.iterdir()) == [folder]


def test_a_tar_gz_member_leaving_its_folder_is_refused(tmp_path, unpacked_into):
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as opened:
        opened.add(MODULE / "tfhub_module.pb", "../outside.pb")
    with pytest.raises(ConfigurationError, match="'../outside.pb' would be written outside"):
        ElmoEmbedder(archive)
    assert not (unpacked_into.parent / "outside.pb").exists()
