"""The published biLMs by short name (AllenNLP's bilm-tf pairs, ELMoForManyLangs' ZIPs in NLPL's
repository): their URLs, the same tables in docs/elmo.md, a fast clear error offline, the cached
copy when there is one, and the sizes checked after a download. Nothing is downloaded: the
network is cut or the download replaced."""

import json
import re
import socket
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List

import numpy
import pytest
import torch
from cached_path import resource_to_filename

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo import ElmoBiLm, read_options, save_bilm
from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.formats.naming import package_files
from elmo_plugin.elmo.formats.naming.package_files import fetch, local_file
from elmo_plugin.elmo.formats.efml.directory import PACKAGED_CONFIGS, read_architecture
from elmo_plugin.elmo.formats.naming.published_models import (
    BASE_URL,
    PUBLISHED_ARCHIVES,
    PUBLISHED_MODELS,
    PublishedArchive,
)
from tests.published_sizes import published_options
from tests.paths import FIXTURES, PROJECT_ROOT

ORIGINAL = PUBLISHED_MODELS["original"]
EFML_CONFIG = "cnn_50_100_512_4096_sample.json"
PACKAGED = Path(PACKAGED_CONFIGS)


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No network, and an empty AllenNLP cache in tmp_path/cache."""

    def unreachable(*args, **kwargs):
        raise OSError("[Errno 101] Network is unreachable")

    monkeypatch.setattr(socket, "create_connection", unreachable)
    monkeypatch.setattr(package_files, "CACHE_DIRECTORY", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    return tmp_path / "cache"


@pytest.fixture
def downloads(monkeypatch):
    """Replaces downloading: URL -> local file, from the dict this returns; records URLs."""
    files: Dict[str, Any] = {}
    asked: List[str] = []

    def fake_fetch(url, what):
        asked.append(url)
        return files[url]

    monkeypatch.setattr(package_files, "fetch", fake_fetch)
    files["asked"] = asked
    return files


def test_each_name_gives_its_two_urls(downloads):
    for name, model in PUBLISHED_MODELS.items():
        for file_name, url in [
            ("options.json", model.options_url),
            ("weights.hdf5", model.weights_url),
        ]:
            assert url.startswith(BASE_URL)
            downloads[url] = f"/cache/{file_name}"
            assert (
                local_file(f"elmo_plugin://published/{name}/{file_name}", "x")
                == f"/cache/{file_name}"
            )
    assert downloads["asked"][:2] == [
        PUBLISHED_MODELS["small"].options_url,
        PUBLISHED_MODELS["small"].weights_url,
    ]
    assert ORIGINAL.weights_url == BASE_URL + (
        "2x4096_512_2048cnn_2xhighway/elmo_2x4096_512_2048cnn_2xhighway_weights.hdf5"
    )


def test_unknown_names_and_files_list_what_exists():
    with pytest.raises(
        ConfigurationError,
        match="no published ELMo biLM is named 'huge'; the names are small, medium, original",
    ):
        local_file("elmo_plugin://published/huge/options.json", "biLM options_file")
    with pytest.raises(
        ConfigurationError, match="has the files options.json and weights.hdf5, not 'vocab.txt'"
    ):
        local_file("elmo_plugin://published/small/vocab.txt", "biLM options_file")


def test_offline_a_download_fails_fast_naming_the_url_and_the_way_out(offline):
    started = time.monotonic()
    with pytest.raises(MissingFileError) as error:
        local_file("elmo_plugin://published/original/weights.hdf5", "biLM weight_file")
    assert time.monotonic() - started < 2
    message = str(error.value)
    assert f"biLM weight_file {ORIGINAL.weights_url} could not be downloaded" in message
    assert (
        "Network is unreachable" in message
        and f"curl -L -o elmo_2x4096_512_2048cnn_2xhighway_weights.hdf5 '{ORIGINAL.weights_url}'"
        in message
    )
    assert "weight_file" in message.split("name the local file")[1]


def test_offline_the_cached_copy_is_used(offline):
    cached = offline / resource_to_filename(ORIGINAL.options_url)
    cached.write_text("{}")
    assert fetch(ORIGINAL.options_url, "biLM options_file") == str(cached)


def test_downloaded_options_are_checked_against_the_published_sizes(downloads, elmo_options):
    downloads[ORIGINAL.options_url] = elmo_options  # the tiny fixture biLM's, not the original's
    with pytest.raises(
        ConfigurationError, match=r"give lstm.dim 64, but the published 'original' biLM has 4096"
    ):
        read_options("elmo_plugin://published/original/options.json")


def test_elmo_embedder_loads_a_published_biLM_by_its_short_name(downloads, tmp_path):
    torch.manual_seed(0)
    save_bilm(ElmoBiLm.from_options(published_options("small")), str(tmp_path))
    small = PUBLISHED_MODELS["small"]
    downloads[small.options_url] = str(tmp_path / "options.json")
    downloads[small.weights_url] = str(tmp_path / "weights.hdf5")
    vectors = ElmoEmbedder("small").embed_sentence(["Hello", "world"])
    assert vectors.shape == (3, 2, 256)
    assert downloads["asked"] == [small.options_url, small.weights_url]
    with pytest.raises(ConfigurationError, match="leave out weight_file"):
        ElmoEmbedder("small", "my_weights.hdf5")


def test_the_sizes_agree_with_the_published_architectures():
    for name in ("small", "original"):
        options = published_options(name)
        model = PUBLISHED_MODELS[name]
        assert (model.cells, model.projection, model.highway) == (
            options["lstm"]["dim"],
            options["lstm"]["projection_dim"],
            options["char_cnn"]["n_highway"],
        )


def test_docs_show_the_same_table():
    page = (PROJECT_ROOT / "docs" / "elmo.md").read_text(encoding="utf-8")
    section = page.split("## Published biLMs", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    shown = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        urls = re.findall(r"\((https://[^)]+)\)", row)
        shown[cells[0].strip("`")] = urls
    assert shown == {name: [m.options_url, m.weights_url] for name, m in PUBLISHED_MODELS.items()}


EFML_GERMAN = PUBLISHED_ARCHIVES["efml-de"]


def test_each_efml_language_is_one_nlpl_zip_as_efml_links_it(downloads):
    ids = [archive.nlpl_id for archive in PUBLISHED_ARCHIVES.values()]
    assert len(PUBLISHED_ARCHIVES) == 44 and sorted(ids) == list(range(136, 180))
    assert EFML_GERMAN == PublishedArchive(
        "http://vectors.nlpl.eu/repository/11/142.zip", "German", 142
    )
    downloads[EFML_GERMAN.url] = "/cache/142"
    assert local_file("elmo_plugin://published/efml-de/model.zip", "x") == "/cache/142"
    with pytest.raises(ConfigurationError, match="is one ZIP archive, model.zip, not 'vocab.txt'"):
        local_file("elmo_plugin://published/efml-de/vocab.txt", "x")


@pytest.mark.parametrize("name", ["efml-de", "elmo_plugin://published/efml-de"])
def test_offline_an_efml_short_name_fails_fast_naming_the_zip(offline, name):
    started = time.monotonic()
    with pytest.raises(MissingFileError) as error:
        ElmoEmbedder(name)
    assert time.monotonic() - started < 2
    message = str(error.value)
    assert f"published biLM {EFML_GERMAN.url} could not be downloaded" in message
    assert f"curl -L -o 142.zip '{EFML_GERMAN.url}'" in message


def _published_like_zip(path, config_path: str) -> str:
    """The EFML fixture model as NLPL publishes one: a ZIP whose `config.json` names its
    architecture by a path on the machine that trained it."""
    model = FIXTURES / "efml" / "model"
    arguments = json.loads((model / "config.json").read_text())
    arguments["config_path"] = config_path
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member in model.iterdir():
            if member.name != "config.json":
                archive.write(member, member.name)
        archive.writestr("config.json", json.dumps(arguments))
    return str(path)


def test_an_efml_short_name_reads_its_downloaded_zip_in_place(downloads, tmp_path):
    # A download's cached copy has no `.zip` suffix.
    downloads[EFML_GERMAN.url] = _published_like_zip(tmp_path / "142", "cnn_tiny.json")
    sentence = ["Привет", "world", "."]
    expected = ElmoEmbedder(FIXTURES / "efml" / "model").embed_sentence(sentence)
    for name in ("efml-de", "elmo_plugin://published/efml-de/model.zip"):
        assert numpy.array_equal(ElmoEmbedder(name).embed_sentence(sentence), expected)
    assert downloads["asked"] == [EFML_GERMAN.url] * 2
    with pytest.raises(ConfigurationError, match="leave out weight_file"):
        ElmoEmbedder("efml-de", "weights.hdf5")


def test_the_published_architecture_is_found_where_efml_finds_it(tmp_path):
    # NLPL's ZIPs name EFML's packaged config by a path on the authors' machine; EFML then
    # reads its own copy, and so do we (shipped unchanged).
    archive = _published_like_zip(tmp_path / "142.zip", "/authors/configs/" + EFML_CONFIG)
    shipped = json.loads((PACKAGED / EFML_CONFIG).read_text())
    assert read_architecture(archive) == shipped
    assert shipped["encoder"]["dim"] == 4096 and shipped["token_embedder"]["word_dim"] == 100


def test_docs_list_every_efml_short_name_with_its_zip():
    page = (PROJECT_ROOT / "docs" / "elmo.md").read_text(encoding="utf-8")
    section = page.split("## Published biLMs", 1)[1].split("\n## ", 1)[0]
    shown = {
        name: url for url, name in re.findall(r"\]\((http://[^)]+)\): `(efml-[a-z]+)`", section)
    }
    assert shown == {name: archive.url for name, archive in PUBLISHED_ARCHIVES.items()}
