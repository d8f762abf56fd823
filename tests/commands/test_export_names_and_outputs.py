"""`allennlp elmo-export` takes a biLM by every name the other entry points take (in both
formats), and checks its output (folder, files, not an input, the mix) before it reads the
biLM; without the `onnx` extra the ONNX export is one line."""

import argparse
import importlib.util
import math
import os
import shutil
import sys
import zipfile
from typing import Any, Dict

import pytest

import elmo_plugin.allennlp.commands  # noqa: F401
from elmo_plugin.allennlp.commands import elmo_export
from elmo_plugin.elmo import load_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.names import files_read
from elmo_plugin.elmo.formats.naming.package_files import SHIPPED_BILM
from tests.lm.conftest import run_allennlp
from tests.paths import FIXTURES

HAS_ONNX = importlib.util.find_spec("onnx") is not None
READ_ONLY_FILE_SYSTEM = "/sys"  # sysfs refuses new files, to root too


@pytest.fixture
def bilm_folder(tmp_path) -> str:
    folder = tmp_path / "bilm"
    folder.mkdir()
    shutil.copy(FIXTURES / "elmo" / "options.json", folder / "options.json")
    shutil.copy(FIXTURES / "elmo" / "lm_weights.hdf5", folder / "weights.hdf5")
    return str(folder)


@pytest.fixture
def bilm_zip(tmp_path, bilm_folder) -> str:
    path = tmp_path / "bilm.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name in ("options.json", "weights.hdf5"):
            archive.write(os.path.join(bilm_folder, name), name)
    return str(path)


def test_bilm_tf_export_takes_folders_zips_and_package_names(tmp_path, bilm_folder, bilm_zip):
    run_allennlp("elmo-export", bilm_zip, str(tmp_path / "from-zip"))
    exported = load_bilm(str(tmp_path / "from-zip"), None).weight_digests()
    assert exported == load_bilm(bilm_folder, None).weight_digests()
    run_allennlp("elmo-export", bilm_folder, str(tmp_path / "from-folder"))
    assert load_bilm(str(tmp_path / "from-folder"), None).weight_digests() == exported
    run_allennlp("elmo-export", SHIPPED_BILM, str(tmp_path / "shipped"))
    assert (tmp_path / "shipped" / "weights.hdf5").exists()


def test_bilm_tf_export_of_an_elmoformanylangs_model_points_to_onnx(tmp_path):
    with pytest.raises(ConfigurationError, match="ELMoForManyLangs model.*--format onnx"):
        run_allennlp("elmo-export", str(FIXTURES / "efml" / "model"), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not HAS_ONNX, reason="the onnx extra is not installed")
def test_onnx_export_takes_a_zip_and_a_package_name(tmp_path, bilm_zip):
    run_allennlp("elmo-export", bilm_zip, str(tmp_path / "zip"), "--format", "onnx")
    assert (tmp_path / "zip" / "elmo.onnx").stat().st_size > 0
    run_allennlp("elmo-export", SHIPPED_BILM, str(tmp_path / "shipped"), "--format", "onnx")
    assert (tmp_path / "shipped" / "elmo.onnx").stat().st_size > 0


def test_a_missing_name_says_it_is_missing(tmp_path):
    with pytest.raises(ConfigurationError, match="'/models/nope': no such file or folder"):
        run_allennlp("elmo-export", "/models/nope", str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


@pytest.fixture
def never_loads(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the check must come before the biLM is read")

    monkeypatch.setattr(elmo_export, "load_bilm", never)
    monkeypatch.setattr(elmo_export, "bilm_from_archive", never)


def export(source: str, output: str, format_: str = "onnx", mix=None, gamma: float = 1.0) -> None:
    """`allennlp elmo-export`'s function on its parsed arguments (the command's start-up,
    a second each, left out)."""
    arguments: Dict[str, Any] = dict(include_softmax=False, softmax_float16=False)
    arguments.update(cuda_device=-1, weight_file=None, keep_sentence_boundaries=False)
    elmo_export.export_from_args(
        argparse.Namespace(
            archive_file=source,
            output_dir=output,
            format=format_,
            scalar_mix=mix,
            gamma=gamma,
            **arguments,
        )
    )


def _file(tmp_path) -> str:
    (tmp_path / "a-file").write_text("kept")
    return str(tmp_path / "a-file")


OUTPUT_FOLDERS = {
    "an existing file": (_file, "is not a directory"),
    "/dev/null": (lambda tmp_path: "/dev/null", "is not a directory"),
    "a ZIP": (lambda tmp_path: str(tmp_path / "bilm.zip"), "is not a directory"),
    "below a file": (lambda tmp_path: os.path.join(_file(tmp_path), "out"), "is not a directory"),
    "on a read-only file system": (
        lambda tmp_path: f"{READ_ONLY_FILE_SYSTEM}/elmo-out",
        "is not writable",
    ),
}


@pytest.mark.parametrize("format_", ["bilm-tf", "onnx"])
@pytest.mark.parametrize("case", sorted(OUTPUT_FOLDERS))
def test_an_output_folder_that_cannot_be_written_is_refused_before_the_bilm_is_read(
    tmp_path, never_loads, bilm_folder, bilm_zip, case, format_
):
    if format_ == "onnx" and not HAS_ONNX:
        pytest.skip("the onnx extra is not installed")
    make, message = OUTPUT_FOLDERS[case]
    output = make(tmp_path)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(ConfigurationError, match=message):
        export(bilm_folder, output, format_)
    assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.skipif(not HAS_ONNX, reason="the onnx extra is not installed")
def test_onnx_export_never_writes_through_a_link_onto_an_input(tmp_path, never_loads, bilm_folder):
    out = tmp_path / "out"
    out.mkdir()
    weights = os.path.join(bilm_folder, "weights.hdf5")
    before = open(weights, "rb").read()
    (out / "elmo.onnx").symlink_to(weights)
    with pytest.raises(ConfigurationError, match="would destroy the source's weights$"):
        export(bilm_folder, str(out))
    assert open(weights, "rb").read() == before


@pytest.mark.skipif(not HAS_ONNX, reason="the onnx extra is not installed")
def test_a_mix_of_nan_or_inf_is_refused_before_the_bilm_is_read(tmp_path, never_loads, bilm_folder):
    for mix, gamma in (([0.0, 1.0, 2.0], math.nan), ([0.0, math.inf, 1.0], 1.0)):
        with pytest.raises(ConfigurationError, match="must be finite numbers"):
            export(bilm_folder, str(tmp_path / "out"), mix=mix, gamma=gamma)
    assert not (tmp_path / "out").exists()


def test_without_the_onnx_extra_the_export_is_one_line_before_the_bilm_is_read(
    monkeypatch, tmp_path, never_loads, bilm_folder
):
    monkeypatch.setitem(sys.modules, "onnx", None)  # what an absent package imports as
    with pytest.raises(ConfigurationError, match=r'pip install "elmo_plugin\[onnx\]"') as error:
        run_allennlp("elmo-export", bilm_folder, str(tmp_path / "out"), "--format", "onnx")
    assert isinstance(error.value, ImportError)
    assert not (tmp_path / "out").exists()


def test_a_short_name_is_taken_and_checked_before_any_download(tmp_path):
    files = elmo_export.export_source("small", None)
    assert files.options_file.startswith("elmo_plugin://published/small/")
    elmo_export.check_export_output(str(tmp_path / "out"), ["elmo.onnx"], files_read(files, "x"))
    assert not (tmp_path / "out").exists()
