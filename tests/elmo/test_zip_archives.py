"""
NLPL's ELMo archives read in place (`elmo_plugin.elmo.files.zip_archives`): a ZIP holding a
bilm-tf biLM (`options.json`, `model.hdf5`, `vocab.txt`, `meta.json`, as NLPL publishes them)
or an ELMoForManyLangs model, at its top or in a sub-folder, is a biLM name at every entry
point, with the vectors of the unpacked folder, and nothing is unpacked. The ZIPs are built
here from the test biLMs of fixtures/.
"""

import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Dict, List

import h5py
import numpy
import pytest
import torch

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml import EfmlBiLm
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.elmo.formats.naming.names import resolve_bilm
from elmo_plugin.embedding import cli
from tests.paths import FIXTURES

BILM_TF = {
    "options.json": FIXTURES / "elmo" / "options.json",
    "model.hdf5": FIXTURES / "elmo" / "lm_weights.hdf5",
    "vocab.txt": FIXTURES / "elmo" / "vocab_test.txt",
}
EFML = {path.name: path for path in (FIXTURES / "efml" / "model").iterdir()}
KINDS = {"bilm-tf": BILM_TF, "efml": EFML}
SENTENCES = [["Привет", "world", "."], ["The", "cat", "sat", "on", "the", "mat"]]


def _zip(path: Path, files: Dict[str, Path], folder: str = "", **texts: str) -> str:
    """A ZIP at `path` holding `files` (and `texts`) under `folder`, compressed as NLPL's are."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, source in files.items():
            archive.write(source, folder + name)
        for name, text in texts.items():
            archive.writestr(folder + name.replace("_", "."), text)
    return str(path)


def _unpacked(tmp_path: Path, files: Dict[str, Path]) -> str:
    folder = tmp_path / "unpacked"
    folder.mkdir()
    for name, source in files.items():
        shutil.copy(source, folder / name)
    return str(folder)


def _vectors(embedder: ElmoEmbedder) -> List[numpy.ndarray]:
    return embedder.embed_batch(SENTENCES)


def _assert_same(found: List[numpy.ndarray], expected: List[numpy.ndarray]) -> None:
    assert len(found) == len(expected)
    for one, other in zip(found, expected):
        numpy.testing.assert_array_equal(one, other)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("folder", ["", "209/"])
def test_elmo_embedder_reads_either_kind_of_zip_in_place(kind, folder, tmp_path):
    files = KINDS[kind]
    archive = _zip(tmp_path / "209.zip", files, folder, meta_json='{"id": 209}')
    expected = _vectors(ElmoEmbedder(_unpacked(tmp_path, files)))
    before = sorted(os.listdir(tmp_path))
    _assert_same(_vectors(ElmoEmbedder(archive)), expected)
    _assert_same(_vectors(ElmoEmbedder(Path(archive))), expected)
    assert sorted(os.listdir(tmp_path)) == before  # nothing unpacked beside it


@pytest.mark.parametrize("kind", KINDS)
def test_load_bilm_takes_a_zip_as_a_whole_bilm(kind, tmp_path):
    archive = _zip(tmp_path / "model.zip", KINDS[kind])
    from_zip, from_folder = load_bilm(archive, None), load_bilm(
        _unpacked(tmp_path, KINDS[kind]), None
    )
    assert isinstance(from_zip, EfmlBiLm) == (kind == "efml")
    unpacked = from_folder.state_dict()
    assert all(torch.equal(value, unpacked[key]) for key, value in from_zip.state_dict().items())


@pytest.mark.parametrize("kind", KINDS)
def test_the_elmo_embedder_takes_a_zip_from_a_config(kind, tmp_path):
    from allennlp.common import Params
    from allennlp.modules.token_embedders import TokenEmbedder

    archive = _zip(tmp_path / "model.zip", KINDS[kind])
    folder = _unpacked(tmp_path, KINDS[kind])
    # Each format's ids, as its indexer gives them (an EFML model's are its own).
    argument = "efml_tokens" if kind == "efml" else "elmo_tokens"
    ids = {argument: load_bilm(folder, None).batch_to_ids(SENTENCES)}

    def vectors(name: str) -> torch.Tensor:
        params = Params({"type": "elmo", "dropout": 0.0, "options_file": name})
        with torch.no_grad():
            return TokenEmbedder.from_params(params).eval()(**ids)

    torch.testing.assert_close(vectors(archive), vectors(folder), rtol=0, atol=0)


@pytest.mark.parametrize("flag, kind", [("--model", "bilm-tf"), ("--options-file", "efml")])
def test_elmo_embed_takes_a_zip(flag, kind, tmp_path):
    archive = _zip(tmp_path / "model.zip", KINDS[kind], "model/")
    text = tmp_path / "in.txt"
    text.write_text("\n".join(" ".join(sentence) for sentence in SENTENCES) + "\n", "utf-8")
    cli.main([str(text), str(tmp_path / "out.hdf5"), flag, archive])
    expected = _vectors(ElmoEmbedder(_unpacked(tmp_path, KINDS[kind])))
    with h5py.File(tmp_path / "out.hdf5", "r") as output:
        _assert_same([output[str(i)][()] for i in range(len(SENTENCES))], expected)


def test_elmo_embed_will_not_write_over_the_zip(tmp_path, capsys):
    archive = _zip(tmp_path / "model.zip", BILM_TF)
    text = tmp_path / "in.txt"
    text.write_text("a b\n", "utf-8")
    with pytest.raises(SystemExit):
        cli.main([str(text), archive, "--model", archive])
    assert "would destroy" in capsys.readouterr().err
    assert zipfile.ZipFile(archive).namelist() == list(BILM_TF)


def test_the_files_of_a_zip_are_named_inside_it(tmp_path):
    archive = _zip(tmp_path / "209.zip", BILM_TF, "elmo/")
    files = resolve_bilm(archive)
    assert (files.options_file, files.weight_file) == (
        f"{archive}/elmo/options.json",
        f"{archive}/elmo/model.hdf5",
    )
    # The two members named as files give the same biLM; so does the sub-folder.
    by_members = ElmoEmbedder(files.options_file, files.weight_file)
    _assert_same(_vectors(by_members), _vectors(ElmoEmbedder(f"{archive}/elmo")))


def test_n_characters_261_gives_the_vectors_of_262(tmp_path):
    # simple_elmo refuses 261 for embedding and asks for 262 (the table's 261 rows and
    # padding); bilm-tf's training writes 261. Either reads the table the weights hold.
    options = json.loads(BILM_TF["options.json"].read_text())
    assert options["char_cnn"]["n_characters"] == 262
    options["char_cnn"]["n_characters"] = 261
    files = {k: v for k, v in BILM_TF.items() if k != "options.json"}
    archive = _zip(tmp_path / "m.zip", files, options_json=json.dumps(options))
    expected = _vectors(ElmoEmbedder(_unpacked(tmp_path, BILM_TF)))
    _assert_same(_vectors(ElmoEmbedder(archive)), expected)


def test_a_zip_holding_no_bilm_lists_what_each_format_needs(tmp_path):
    archive = _zip(tmp_path / "words.zip", {"model.bin": BILM_TF["vocab.txt"]}, meta_json="{}")
    with pytest.raises(ConfigurationError) as error:
        ElmoEmbedder(archive)
    message = str(error.value)
    assert "the ZIP archive" in message and "it has meta.json, model.bin" in message
    for needs in ("options.json and model.hdf5", "config.json and char.dic"):
        assert needs in message


def test_a_zip_of_two_bilms_names_them(tmp_path):
    with zipfile.ZipFile(tmp_path / "two.zip", "w") as archive:
        for folder in ("a/", "b/"):
            for name, source in BILM_TF.items():
                archive.write(source, folder + name)
    with pytest.raises(ConfigurationError, match=r"holds 2 biLMs, in .*two.zip/a, .*two.zip/b"):
        resolve_bilm(tmp_path / "two.zip")


def test_a_missing_zip_or_member_is_named(tmp_path):
    with pytest.raises(ConfigurationError, match="'missing.zip': no such ZIP archive"):
        ElmoEmbedder("missing.zip")
    archive = _zip(tmp_path / "m.zip", {"options.json": BILM_TF["options.json"]})
    with pytest.raises(ConfigurationError, match="m.zip holds no 'elmo/model.hdf5'"):
        ElmoEmbedder(f"{archive}/options.json", f"{archive}/elmo/model.hdf5")


def test_a_corrupt_member_is_a_clear_error(tmp_path):
    archive = _zip(tmp_path / "m.zip", BILM_TF)
    data = bytearray(Path(archive).read_bytes())
    start = data.find(b"model.hdf5") + 200  # inside the compressed weights
    data[start : start + 64] = bytes(64)
    Path(archive).write_bytes(bytes(data))
    with pytest.raises(ConfigurationError, match="m.zip/model.hdf5: cannot be read from the ZIP"):
        ElmoEmbedder(archive)


def test_elmo_perplexity_says_a_zip_holds_no_softmax(tmp_path):
    from elmo_plugin.allennlp.lm.perplexity import export_perplexity

    archive = _zip(tmp_path / "209.zip", BILM_TF)
    with pytest.raises(ConfigurationError, match="holds a biLM without its softmax"):
        export_perplexity(archive, str(FIXTURES / "lm" / "captions_valid.txt"))
