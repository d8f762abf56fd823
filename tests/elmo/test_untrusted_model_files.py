"""Model files from anyone are read within bounds: a ZIP member declaring far more than it
compresses (a "ZIP bomb") or more than memory holds is refused before it is read, an
ELMoForManyLangs architecture is typed and bounded before anything is allocated, and each bad
file is a one-line error naming the file, the field and what was expected."""

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files import zip_archives
from elmo_plugin.elmo.formats.efml import load_efml_bilm
from elmo_plugin.elmo.formats.naming.names import resolve_bilm
from tests.paths import FIXTURES

EFML_MODEL = FIXTURES / "efml" / "model"
BILM_TF = {
    "options.json": FIXTURES / "elmo" / "options.json",
    "model.hdf5": FIXTURES / "elmo" / "lm_weights.hdf5",
}


@pytest.fixture
def efml_copy(tmp_path) -> Path:
    copy = tmp_path / "model"
    shutil.copytree(EFML_MODEL, copy)
    return copy


def _zip(path: Path, files, **members: bytes) -> str:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, source in files.items():
            archive.write(source, name)
        for name, data in members.items():
            archive.writestr(name.replace("_", "."), data)
    return str(path)


def test_a_member_declaring_far_more_than_it_compresses_is_refused_unread(tmp_path):
    bomb = bytes(zip_archives.SMALL_MEMBER + 1)  # zeros: deflate makes them a thousandth
    archive = _zip(tmp_path / "209.zip", {"options.json": BILM_TF["options.json"]}, model_hdf5=bomb)
    with pytest.raises(ConfigurationError, match=r"209\.zip/model\.hdf5: declares \d+ bytes from"):
        ElmoEmbedder(archive)


def test_a_member_larger_than_the_memory_available_is_refused(tmp_path, monkeypatch):
    files = {path.name: path for path in EFML_MODEL.iterdir()}
    archive = _zip(tmp_path / "efml.zip", files)
    size = (EFML_MODEL / "encoder.pkl").stat().st_size
    monkeypatch.setattr(zip_archives, "available_memory", lambda: size - 1)
    with pytest.raises(ConfigurationError, match=r"efml\.zip/encoder\.pkl: declares .* memory"):
        load_efml_bilm(archive)
    monkeypatch.setattr(zip_archives, "available_memory", lambda: size)
    load_efml_bilm(archive)


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 cut short"])
def test_an_empty_or_truncated_zip_is_not_taken_for_an_options_file(tmp_path, content):
    archive = tmp_path / "209.zip"
    archive.write_bytes(content)
    with pytest.raises(ConfigurationError, match=r"209\.zip': not a readable ZIP archive"):
        ElmoEmbedder(str(archive))


def test_a_zip_of_many_folders_is_listed_once(tmp_path, monkeypatch):
    """Each folder was looked through by reading the archive's listing again: quadratic."""
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for index in range(300):
            zipped.writestr(f"folder{index}/note.txt", "")
    opened = []
    original = zipfile.ZipFile

    def counted(*args, **kwargs):
        opened.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(zip_archives.zipfile, "ZipFile", counted)
    with pytest.raises(ConfigurationError, match="holds no biLM"):
        resolve_bilm(str(archive))
    assert len(opened) <= 3


def _architecture_with(efml_copy: Path, section: str, key: str, value) -> None:
    path = efml_copy / "cnn_tiny.json"
    architecture = json.loads(path.read_text())
    if key:
        architecture[section][key] = value
    else:
        architecture[section] = value
    path.write_text(json.dumps(architecture))


@pytest.mark.parametrize(
    "section,key,value,expected",
    [
        ("token_embedder", "max_characters_per_token", 10**9, "an integer from 3 to 1000"),
        ("token_embedder", "max_characters_per_token", "50", "an integer from 3 to 1000"),
        ("token_embedder", "max_characters_per_token", 3, "wider than a token of 3"),
        ("token_embedder", "filters", "abc", "a list of \\[width, count\\] pairs"),
        ("token_embedder", "filters", [[1]], "a list of \\[width, count\\] pairs"),
        ("token_embedder", "filters", [], "a list of \\[width, count\\] pairs"),
        ("token_embedder", "n_highway", 1.5, "a non-negative integer"),
        ("encoder", "n_layers", "2", "a positive integer"),
        ("encoder", "cell_clip", "3", "a non-negative number or null"),
        ("encoder", "", ["elmo"], "'encoder' is \\['elmo'\\], expected an object"),
    ],
)
def test_architecture_values_are_typed_and_bounded(efml_copy, section, key, value, expected):
    _architecture_with(efml_copy, section, key, value)
    with pytest.raises(ConfigurationError, match=f"cnn_tiny|model.*{expected}") as caught:
        load_efml_bilm(str(efml_copy))
    assert key in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "section,key,value,weights",
    [("encoder", "dim", 10**6, "encoder.pkl"), ("token_embedder", "char_dim", 10**6, "token_")],
)
def test_an_architecture_implying_more_weights_than_the_files_hold_is_refused_unbuilt(
    efml_copy, section, key, value, weights
):
    _architecture_with(efml_copy, section, key, value)
    with pytest.raises(ConfigurationError, match=f"{weights}.*: holds \\d+ bytes, but .* imply"):
        load_efml_bilm(str(efml_copy))


def test_a_table_id_beyond_the_table_is_refused(efml_copy):
    table = efml_copy / "char.dic"
    lines = table.read_text(encoding="utf-8").splitlines()
    token, _ = lines[-1].split("\t")
    table.write_text("\n".join(lines[:-1] + [f"{token}\t{len(lines) + 5}"]) + "\n")
    with pytest.raises(ConfigurationError, match=r"char\.dic: has the id \d+, beyond its"):
        load_efml_bilm(str(efml_copy))


def test_a_table_that_is_not_utf8_is_refused(efml_copy):
    (efml_copy / "word.dic").write_bytes(b"<oov>\t0\n<pad>\t1\n\xff\xfe\t2\n")
    with pytest.raises(ConfigurationError, match=r"word\.dic: not UTF-8 text"):
        load_efml_bilm(str(efml_copy))
