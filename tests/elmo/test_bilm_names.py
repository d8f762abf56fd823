"""One way to name a biLM (`elmo_plugin.elmo.formats.naming.names`), the same at every entry point:
a short name, `elmo_plugin://...`, a folder, the two files as `str` or `os.PathLike`."""

import os
import shutil
from pathlib import Path

import pytest

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import refuse_overwriting
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.elmo.formats.naming.names import BilmFiles, require_weights, resolve_bilm
from elmo_plugin.elmo.formats.naming.package_files import SHIPPED_BILM, local_path, package_path
from elmo_plugin.elmo.formats.naming.published_models import PUBLISHED_MODELS

SHIPPED = BilmFiles(f"{SHIPPED_BILM}/options.json", f"{SHIPPED_BILM}/weights.hdf5")


@pytest.fixture
def export(tmp_path, elmo_options, elmo_weights) -> Path:
    folder = tmp_path / "my export"
    folder.mkdir()
    shutil.copy(elmo_options, folder / "options.json")
    shutil.copy(elmo_weights, folder / "weights.hdf5")
    return folder


def test_a_short_name_is_its_published_files():
    files = resolve_bilm("original")
    assert files == BilmFiles(
        "elmo_plugin://published/original/options.json",
        "elmo_plugin://published/original/weights.hdf5",
    )


@pytest.mark.parametrize("name", [SHIPPED_BILM, SHIPPED_BILM + "/", SHIPPED.options_file])
def test_the_shipped_bilm_by_its_folder_or_its_options_alone(name):
    assert resolve_bilm(name) == SHIPPED


def test_a_folder_as_text_or_path_is_its_export(export):
    expected = BilmFiles(f"{export}/options.json", f"{export}/weights.hdf5")
    assert resolve_bilm(str(export)) == expected
    assert resolve_bilm(export) == expected


def test_a_user_folder_in_the_home_directory_is_expanded(export, monkeypatch):
    monkeypatch.setenv("HOME", str(export.parent))
    assert resolve_bilm("~/my export").options_file == f"{export}/options.json"


def test_paths_are_taken_for_both_files(elmo_options, elmo_weights):
    files = resolve_bilm(Path(elmo_options), Path(elmo_weights))
    assert files == BilmFiles(str(elmo_options), str(elmo_weights))


def test_an_unknown_short_name_lists_the_known_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError) as error:
        resolve_bilm("orignal")
    message = str(error.value)
    assert "'orignal' is neither a file nor a folder" in message
    assert all(name in message for name in PUBLISHED_MODELS) and SHIPPED_BILM in message


def test_a_folder_without_a_bilm_lists_what_it_has_and_what_each_format_needs(tmp_path):
    (tmp_path / "options.json").write_text("{}")
    with pytest.raises(ConfigurationError) as error:
        resolve_bilm(tmp_path)
    message = str(error.value)
    assert "holds no biLM: it has options.json" in message
    assert "options.json and weights.hdf5 (bilm-tf" in message


def test_a_whole_bilm_with_a_weight_file_is_refused(export):
    with pytest.raises(ConfigurationError, match="brings its own weights"):
        resolve_bilm(export, export / "weights.hdf5")


def test_an_options_file_alone_needs_its_weights_outside_a_model(elmo_options):
    files = resolve_bilm(elmo_options)
    assert files.weight_file is None
    with pytest.raises(ConfigurationError, match="weights would be random"):
        require_weights(files)


@pytest.mark.parametrize("bad", [3, None, b"options.json"])
def test_a_name_of_another_type_is_named(bad):
    with pytest.raises(ConfigurationError, match="options_file must"):
        resolve_bilm(bad)


def test_load_bilm_takes_every_naming(export, elmo_options, elmo_weights):
    by_files = load_bilm(elmo_options, elmo_weights).state_dict()
    for bilm in (load_bilm(export, None), load_bilm(str(export), None)):
        assert all((bilm.state_dict()[key] == value).all() for key, value in by_files.items())


def test_package_names_resolve_to_real_paths_before_they_are_compared():
    weights = local_path(f"{SHIPPED_BILM}/weights.hdf5")
    assert weights == os.path.realpath(
        package_path("pretrained/elmo_wikipedia_512x128/weights.hdf5")
    )
    with pytest.raises(ConfigurationError, match="would destroy"):
        refuse_overwriting(weights, {"--options-file": f"{SHIPPED_BILM}/weights.hdf5"})
    with pytest.raises(ConfigurationError, match="would destroy"):
        refuse_overwriting(f"{SHIPPED_BILM}/vocab.txt", {"vocabulary": weights[:-12] + "vocab.txt"})


@pytest.mark.parametrize("name", ["../../setup.py", "/etc/hostname", "pretrained/../../x"])
def test_a_package_name_cannot_leave_the_package(name):
    with pytest.raises(ConfigurationError, match="outside the elmo_plugin package"):
        package_path(name)


def test_the_elmo_embedder_and_elmo_take_a_folder_from_a_config(export, elmo_options, elmo_weights):
    import torch
    from allennlp.common import Params
    from allennlp.modules.token_embedders import TokenEmbedder

    from elmo_plugin.elmo import batch_to_ids

    def vectors(**files):
        params = Params({"type": "elmo", "dropout": 0.0, **files})
        embedder = TokenEmbedder.from_params(params).eval()
        with torch.no_grad():
            return embedder(batch_to_ids([["A", "folder", "."]]))

    by_files = vectors(options_file=str(elmo_options), weight_file=str(elmo_weights))
    torch.testing.assert_close(vectors(options_file=str(export)), by_files)


def test_an_elmoformanylangs_folder_is_a_whole_bilm_wherever_a_bilm_is_named(tmp_path):
    import numpy

    from elmo_plugin import ElmoEmbedder
    from elmo_plugin.elmo.formats.efml import EfmlBiLm
    from tests.paths import FIXTURES

    folder = FIXTURES / "efml" / "model"
    assert resolve_bilm(folder).format == "ELMoForManyLangs"
    assert isinstance(load_bilm(folder, None), EfmlBiLm)
    sentence = ["Привет", "world", "."]
    by_path = ElmoEmbedder(folder).embed_sentence(sentence)
    by_text = ElmoEmbedder(str(folder)).embed_sentence(sentence)
    assert by_path.shape == (3, 3, 32) and numpy.array_equal(by_path, by_text)
    with pytest.raises(ConfigurationError, match="no dropout"):
        load_bilm(folder, None, dropout=0.5)
