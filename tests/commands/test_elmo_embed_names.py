"""`elmo-embed` names its biLM as every entry point does (`elmo_plugin.elmo.formats.naming.names`):
the shipped biLM by default, `--model` for a short name or a folder, or the two files."""

import shutil

import h5py
import numpy
import pytest

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.errors import MissingFileError
from elmo_plugin.embedding import cli
from tests.paths import FIXTURES

SENTENCES = ["The cat sat .", "Привет world"]


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    return path


def _embedded(output) -> numpy.ndarray:
    with h5py.File(output, "r") as handle:
        return handle["1"][()]


def test_the_shipped_bilm_is_the_default(text, tmp_path):
    cli.main([str(text), str(tmp_path / "out.hdf5")])
    expected = ElmoEmbedder().embed_sentence(SENTENCES[1].split())
    numpy.testing.assert_allclose(_embedded(tmp_path / "out.hdf5"), expected, atol=1e-5)


@pytest.mark.parametrize("folder", ["export", "efml"])
def test_model_takes_a_folder_of_either_format(folder, text, tmp_path, elmo_options, elmo_weights):
    if folder == "export":
        model = tmp_path / "export"
        model.mkdir()
        shutil.copy(elmo_options, model / "options.json")
        shutil.copy(elmo_weights, model / "weights.hdf5")
    else:
        model = FIXTURES / "efml" / "model"
    cli.main([str(text), str(tmp_path / "out.hdf5"), "--model", str(model)])
    expected = ElmoEmbedder(model).embed_sentence(SENTENCES[1].split())
    numpy.testing.assert_allclose(_embedded(tmp_path / "out.hdf5"), expected, atol=1e-5)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--model", "orignal"], "the short names are small, medium, original"),
        (["--weight-file", "w.hdf5"], "--weight-file goes with --options-file"),
        (["--model", "original", "--weight-file", "w.hdf5"], "brings its own weights"),
        (["--options-file", str(FIXTURES / "elmo" / "options.json")], "needs its weight_file"),
        (["--options-file", "o.json"], "'o.json': no such file or folder"),
        (["--model", "/models/nope"], "'/models/nope': no such file or folder (tried"),
        (["--model", "models/nope/"], "the nearest folder there is"),
    ],
)
def test_a_bad_naming_is_one_line_naming_what_is_expected(flags, message, text, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([str(text), str(tmp_path / "out.hdf5"), *flags])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert message in error and len(error.strip().splitlines()) == 1
    assert not (tmp_path / "out.hdf5").exists()


def test_elmo_embedder_says_a_missing_path_is_missing():
    with pytest.raises(MissingFileError, match="'/models/nope': no such file or folder"):
        ElmoEmbedder("/models/nope")
