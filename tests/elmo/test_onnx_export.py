"""The ONNX export (`elmo_plugin.elmo.formats.onnx.export`) gives our `Elmo`'s numbers in ONNX
Runtime, with its recurrence a loop, and runs where there is no torch and no AllenNLP."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy
import pytest
import torch

from elmo_plugin.elmo import Elmo, ElmoBiLm, batch_to_ids, load_bilm, read_options
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.onnx import tokenizer as onnx_tokenizer
from elmo_plugin.elmo.modules.elmo import remove_sentence_boundaries
from tests.paths import PROJECT_ROOT

SHIPPED = PROJECT_ROOT / "elmo_plugin" / "pretrained" / "elmo_wikipedia_512x128"
# Real sentences of 1 to 100 tokens, in one padded batch.
LENGTHS = [1, 100, 7, 2, 31, 15]
MIX = [0.3, -0.4, 0.8]
TOLERANCE = 1e-5
needs_onnx = pytest.mark.skipif(
    importlib.util.find_spec("onnx") is None or importlib.util.find_spec("onnxruntime") is None,
    reason="onnx and onnxruntime are not installed (the `onnx` extra; the current profile has it)",
)


@pytest.fixture(scope="module")
def batch():
    with open(PROJECT_ROOT / "fixtures" / "elmo" / "sentences.json") as handle:
        words = [line.split() for group in json.load(handle) for line in group]
    long = [word for sentence in words for word in sentence]
    return [long[:length] if length > 40 else words[i][:length] for i, length in enumerate(LENGTHS)]


def _run_onnx(path, ids):
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    return dict(zip(names, session.run(None, {"character_ids": ids})))


def _export(bilm, path, **kwargs):
    from elmo_plugin.elmo.formats.onnx.export import export_onnx

    return export_onnx(bilm, str(path), **kwargs)


@needs_onnx
@pytest.mark.parametrize(
    "files",
    [("fixtures/elmo/options.json", "fixtures/elmo/lm_weights.hdf5"), "shipped"],
    ids=["bilm_tf_test_model", "shipped_bilm"],
)
def test_onnx_runtime_gives_our_elmo_outputs(files, batch, tmp_path):
    from elmo_plugin.elmo.formats.onnx.export import ScalarMixWeights, parameter_bytes

    options, weights = (
        (str(SHIPPED / "options.json"), str(SHIPPED / "weights.hdf5"))
        if files == "shipped"
        else tuple(str(PROJECT_ROOT / f) for f in files)
    )
    elmo = Elmo(options, weights, dropout=0.0, scalar_mix_parameters=MIX)
    elmo.scalar_mixes[0].gamma.data.fill_(0.5)
    ids = batch_to_ids(batch)
    with torch.no_grad():
        ours = elmo(ids)
        bilm_output = elmo.bilm(ids)
    path = _export(elmo.bilm, tmp_path / "elmo.onnx", scalar_mix=ScalarMixWeights(MIX, 0.5))
    theirs = _run_onnx(path, ids.numpy())

    assert theirs["layers"].shape[0] == elmo.bilm.num_layers
    assert_equals_elmo(theirs, ours, bilm_output)
    # The recurrence is a loop, not unrolled: the file is the weights' size.
    assert os.path.getsize(path) < 1.1 * parameter_bytes(elmo.bilm)


def assert_equals_elmo(theirs, ours, bilm_output) -> None:
    """ONNX Runtime's `layers`, `mask` and `mixed` against the biLM's activations (boundaries
    removed) and `Elmo`'s mask and mix, to `TOLERANCE`."""
    for layer, activations in zip(theirs["layers"], bilm_output["activations"]):
        expected, _ = remove_sentence_boundaries(activations, bilm_output["mask"])
        numpy.testing.assert_allclose(layer, expected.numpy(), rtol=0, atol=TOLERANCE)
    assert (theirs["mask"] == ours["mask"].numpy()).all()
    mixed = ours["elmo_representations"][0].numpy()
    numpy.testing.assert_allclose(theirs["mixed"], mixed, rtol=0, atol=TOLERANCE)


@needs_onnx
def test_with_sentence_boundaries_the_outputs_are_the_bilms_activations(batch, tmp_path):
    bilm = load_bilm(
        str(PROJECT_ROOT / "fixtures/elmo/options.json"),
        str(PROJECT_ROOT / "fixtures/elmo/lm_weights.hdf5"),
    )
    ids = batch_to_ids(batch)
    with torch.no_grad():
        ours = bilm(ids)
    theirs = _run_onnx(
        _export(bilm, tmp_path / "m.onnx", keep_sentence_boundaries=True), ids.numpy()
    )
    assert "mixed" not in theirs
    assert (theirs["mask"] == ours["mask"].numpy()).all()
    for layer, activations in zip(theirs["layers"], ours["activations"]):
        numpy.testing.assert_allclose(layer, activations.numpy(), rtol=0, atol=TOLERANCE)


@needs_onnx
def test_what_the_export_cannot_represent_is_an_error(tmp_path):
    from elmo_plugin.elmo.formats.onnx.export import ScalarMixWeights

    options = str(PROJECT_ROOT / "fixtures/elmo/options.json")
    with pytest.raises(ConfigurationError, match="stateful"):
        _export(load_bilm(options, None, stateful=True), tmp_path / "m.onnx")
    with pytest.raises(ConfigurationError, match="2 weights but the biLM has 3 layers"):
        _export(load_bilm(options, None), tmp_path / "m.onnx", scalar_mix=ScalarMixWeights([0, 1]))

    class OtherBiLm(ElmoBiLm):
        pass

    other = OtherBiLm.from_options(read_options(options))
    with pytest.raises(ConfigurationError, match="cannot export a OtherBiLm"):
        _export(other, tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()


def test_without_onnx_the_error_names_the_extra(monkeypatch, tmp_path):
    from elmo_plugin.elmo.formats.onnx.export import export_onnx

    monkeypatch.setitem(sys.modules, "onnx", None)  # what an absent package imports as
    bilm = load_bilm(str(PROJECT_ROOT / "fixtures/elmo/options.json"), None)
    with pytest.raises(ImportError, match=r'pip install "elmo_plugin\[onnx\]"'):
        export_onnx(bilm, str(tmp_path / "m.onnx"))


def test_the_reference_tokenizer_gives_batch_to_ids(batch):
    odd = [["<S>", "</S>", "héllo", "x" * 60, "é" * 30, "日本語", "\udcff"], [], ["The"]]
    for sentences in (batch, odd, []):
        expected = batch_to_ids(sentences).numpy()
        assert (onnx_tokenizer.sentences_to_ids(sentences) == expected).all()


# Runs in an interpreter that sees the standard library, onnxruntime, numpy and the reference
# tokenizer only; it fails if torch, AllenNLP or elmo_plugin can be imported.
RUNNER = """
    import importlib.util, json, sys
    for name in ("torch", "allennlp", "elmo_plugin"):
        assert importlib.util.find_spec(name) is None, f"{name} is importable"
    import numpy, onnxruntime
    from tokenizer import sentences_to_ids
    model, sentences, output = sys.argv[1:]
    with open(sentences) as handle:
        ids = sentences_to_ids(json.load(handle))
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    layers, mask = session.run(["layers", "mask"], {"character_ids": ids})
    numpy.savez(output, layers=layers, mask=mask)
"""


def bare_environment(root, tokenizer, runner):
    """A directory holding links to onnxruntime and numpy (and numpy's libraries) from this
    environment's site-packages, the reference `tokenizer` module and the `runner` script."""
    root.mkdir()
    for package in ("onnxruntime", "numpy"):
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.origin is not None
        location = os.path.dirname(spec.origin)
        site = os.path.dirname(location)
        for name in os.listdir(site):
            if name == package or name == f"{package}.libs":
                os.symlink(os.path.join(site, name), root / name)
    os.symlink(tokenizer.__file__, root / os.path.basename(tokenizer.__file__))
    (root / "runner.py").write_text(textwrap.dedent(runner))
    return root


def run_bare(root, arguments, cwd):
    """`root`'s runner with `arguments` under `python -I -S` (no environment variables, no user
    site, no site-packages), seeing only `root`; the completed process."""
    script = f"import sys; sys.path.insert(0, {str(root)!r}); sys.argv = sys.argv[1:]; " + (
        f"exec(open({str(root / 'runner.py')!r}).read())"
    )
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, "runner", *arguments],
        capture_output=True,
        text=True,
        cwd=cwd,
    )


@needs_onnx
def test_the_model_runs_with_onnxruntime_and_numpy_only(batch, tmp_path):
    bilm = load_bilm(
        str(PROJECT_ROOT / "fixtures/elmo/options.json"),
        str(PROJECT_ROOT / "fixtures/elmo/lm_weights.hdf5"),
    )
    model = _export(bilm, tmp_path / "elmo.onnx")
    root = bare_environment(tmp_path / "bare", onnx_tokenizer, RUNNER)
    (tmp_path / "sentences.json").write_text(json.dumps(batch))
    arguments = [model, str(tmp_path / "sentences.json"), str(tmp_path / "out.npz")]
    result = run_bare(root, arguments, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    ids = batch_to_ids(batch)
    with torch.no_grad():
        ours = bilm(ids)
    theirs = numpy.load(tmp_path / "out.npz")
    expected, mask = remove_sentence_boundaries(ours["activations"][-1], ours["mask"])
    assert (theirs["mask"] == mask.numpy()).all()
    numpy.testing.assert_allclose(theirs["layers"][-1], expected.numpy(), rtol=0, atol=TOLERANCE)
