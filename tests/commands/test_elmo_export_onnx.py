"""`allennlp elmo-export --format onnx`: bilm-tf files, a trained `bilm` archive and an
ELMoForManyLangs model to an ONNX model that gives their biLM's layers; anything else is an
error naming what is supported."""

import importlib.util
import os
import shutil

import numpy
import pytest
import torch

import elmo_plugin.allennlp.commands  # noqa: F401
import elmo_plugin.allennlp.lm  # noqa: F401
from elmo_plugin.allennlp.archives import bilm_from_archive
from elmo_plugin.elmo import batch_to_ids, load_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml import load_efml_bilm
from elmo_plugin.elmo.formats.onnx.efml import onnx_inputs
from elmo_plugin.elmo.modules.elmo import remove_sentence_boundaries
from tests.lm.conftest import allennlp_train, one_file_corpus, run_allennlp
from tests.paths import PROJECT_ROOT, TRAINING_CONFIGS

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("onnx") is None or importlib.util.find_spec("onnxruntime") is None,
    reason="onnx and onnxruntime are not installed (the `onnx` extra; the current profile has it)",
)
OPTIONS = str(PROJECT_ROOT / "fixtures" / "elmo" / "options.json")
WEIGHTS = str(PROJECT_ROOT / "fixtures" / "elmo" / "lm_weights.hdf5")
SENTENCES = [["The", "cat", "sat", "."], ["Hi"], "a b c d e f g h i j k l".split()]


def _assert_gives_the_bilms_layers(path, bilm, mixed=False):
    import onnxruntime

    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    assert names == ["layers", "mask", "mixed"] if mixed else ["layers", "mask"]
    ids = batch_to_ids(SENTENCES)
    layers = session.run(["layers"], {"character_ids": ids.numpy()})[0]
    with torch.no_grad():
        ours = bilm.eval()(ids)  # the export is for inference: no dropout
    for layer, activations in zip(layers, ours["activations"]):
        expected, _ = remove_sentence_boundaries(activations, ours["mask"])
        numpy.testing.assert_allclose(layer, expected.numpy(), rtol=0, atol=1e-5)


def test_bilm_tf_files_export(tmp_path):
    run_allennlp(
        "elmo-export",
        OPTIONS,
        str(tmp_path),
        "--format",
        "onnx",
        "--weight-file",
        WEIGHTS,
        "--scalar-mix",
        "0",
        "1",
        "-1",
        "--gamma",
        "2",
    )
    _assert_gives_the_bilms_layers(str(tmp_path / "elmo.onnx"), load_bilm(OPTIONS, WEIGHTS), True)


def test_a_bilm_tf_directory_exports(tmp_path):
    files = tmp_path / "bilm"
    files.mkdir()
    shutil.copy(OPTIONS, files / "options.json")
    shutil.copy(WEIGHTS, files / "weights.hdf5")
    run_allennlp("elmo-export", str(files), str(tmp_path / "out"), "--format", "onnx")
    bilm = load_bilm(OPTIONS, WEIGHTS)
    _assert_gives_the_bilms_layers(str(tmp_path / "out" / "elmo.onnx"), bilm)


def test_a_trained_bilm_archive_exports(tmp_path):
    tiny = {
        "char_cnn": {"embedding": {"dim": 4}, "filters": [[1, 8], [2, 8]], "n_highway": 1},
        "lstm": {"dim": 16, "projection_dim": 8, "n_layers": 2, "cell_clip": 3, "proj_clip": 3},
    }
    overrides = {
        **one_file_corpus("fixtures/lm/sentences.txt"),
        "model.bilm": tiny,
        "model.num_samples": 20,
        "trainer.num_epochs": 1,
    }
    allennlp_train(
        str(TRAINING_CONFIGS / "bilm" / "bilm_tiny.jsonnet"), tmp_path / "run", overrides
    )
    archive = str(tmp_path / "run" / "model.tar.gz")
    run_allennlp("elmo-export", archive, str(tmp_path / "out"), "--format", "onnx")
    _assert_gives_the_bilms_layers(str(tmp_path / "out" / "elmo.onnx"), bilm_from_archive(archive))


def test_what_cannot_be_exported_is_an_error_naming_what_can(tmp_path):
    text = tmp_path / "model.txt"
    text.write_text("not a biLM")
    with pytest.raises(ConfigurationError, match="Supported are a bilm-tf options.json"):
        run_allennlp("elmo-export", str(text), str(tmp_path / "out"), "--format", "onnx")
    with pytest.raises(ConfigurationError, match="needs its weights: --weight-file"):
        run_allennlp("elmo-export", OPTIONS, str(tmp_path / "out"), "--format", "onnx")
    with pytest.raises(ConfigurationError, match="--scalar-mix: only for --format onnx"):
        run_allennlp("elmo-export", "x.tar.gz", str(tmp_path / "out"), "--scalar-mix", "1")
    with pytest.raises(ConfigurationError, match="or an ELMoForManyLangs model directory"):
        run_allennlp("elmo-export", str(text), str(tmp_path / "out"), "--format", "onnx")
    assert not os.path.exists(tmp_path / "out")


def test_an_elmoformanylangs_model_exports(tmp_path):
    import onnxruntime

    efml = str(PROJECT_ROOT / "fixtures" / "efml" / "model")
    run_allennlp("elmo-export", efml, str(tmp_path), "--format", "onnx")
    session = onnxruntime.InferenceSession(
        str(tmp_path / "elmo.onnx"), providers=["CPUExecutionProvider"]
    )
    bilm = load_efml_bilm(efml)
    ids = bilm.batch_to_ids(SENTENCES)
    layers = session.run(["layers"], onnx_inputs(ids.numpy(), 50))[0]
    with torch.no_grad():
        ours = bilm(ids)
    for layer, activations in zip(layers, ours["activations"]):
        expected, _ = remove_sentence_boundaries(activations, ours["mask"])
        numpy.testing.assert_allclose(layer, expected.numpy(), rtol=0, atol=1e-5)


@pytest.mark.parametrize("model", ["bilm_checkpoint", "hub_module"])
def test_a_training_checkpoint_or_a_hub_module_exports(model, tmp_path):
    source = str(PROJECT_ROOT / "fixtures" / "tensorflow" / model)
    run_allennlp("elmo-export", source, str(tmp_path), "--format", "onnx")
    _assert_gives_the_bilms_layers(str(tmp_path / "elmo.onnx"), load_bilm(source, None))
