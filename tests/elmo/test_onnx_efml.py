"""The ONNX export of an ELMoForManyLangs (EFML) model (`export_onnx` of an `EfmlBiLm`) gives our
`Elmo`'s numbers in ONNX Runtime from its own character and word ids, which the reference
tokenizer (`onnx_efml_tokenizer`) makes from the tables in the model's metadata, with no torch."""

import importlib.util
import json
import os
import shutil
from typing import List

import numpy
import pytest
import torch

from elmo_plugin.elmo import Elmo
from elmo_plugin.elmo.formats.onnx import efml_tokenizer as onnx_efml_tokenizer
from elmo_plugin.elmo.formats.efml import EfmlBiLm, load_efml_bilm
from elmo_plugin.elmo.formats.efml.directory import TOKEN_EMBEDDER_WEIGHTS, WORD_TABLE
from elmo_plugin.elmo.formats.onnx.efml import (
    CHARACTERS_KEY,
    WORDS_KEY,
    onnx_inputs,
    table_metadata,
    table_text,
)
from elmo_plugin.elmo.modules.elmo import remove_sentence_boundaries
from tests.elmo.test_onnx_export import assert_equals_elmo, bare_environment, run_bare
from tests.paths import FIXTURES

needs_onnx = pytest.mark.skipif(
    importlib.util.find_spec("onnx") is None or importlib.util.find_spec("onnxruntime") is None,
    reason="onnx and onnxruntime are not installed (the `onnx` extra; the current profile has it)",
)
MODEL = str(FIXTURES / "efml" / "model")
WIDTH = 50  # the fixture's max_characters_per_token
MIX = [0.3, -0.4, 0.8]
TOLERANCE = 1e-5
# Characters the table lacks (<oov>) in Latin, Cyrillic and CJK; words it lacks; an empty
# token; tokens over max_characters_per_token (cut, words too); EFML's special entries.
SENTENCES = [
    ["The", "history", "of", "the", "city", "was", "written", "in", "1850", "."],
    ["Zwölf", "ЖЁЛТЫЙ", "漢字", "€", "unheardofword", "\U0001f600"],
    ["", "a" * 49, "b" * 48 + "xyz", "река" * 30],
    ["<bos>", "<eos>", "<pad>", "<oov>", "<bow>"],
    [],
    ["one"],
    "the cat sat on the mat and the dog sat on the log while it rained all day .".split(),
]


@pytest.fixture(scope="module")
def without_words(tmp_path_factory):
    """The fixture made a model without word embeddings (word_dim 0), as EFML's
    cnn_0_100_512_4096_sample.json: the word embedding and its projection columns dropped."""
    directory = tmp_path_factory.mktemp("efml") / "model"
    shutil.copytree(MODEL, directory)
    architecture = json.loads((directory / "cnn_tiny.json").read_text())
    word_dim = architecture["token_embedder"]["word_dim"]
    architecture["token_embedder"]["word_dim"] = 0
    (directory / "cnn_tiny.json").write_text(json.dumps(architecture))
    weights = torch.load(directory / TOKEN_EMBEDDER_WEIGHTS)
    del weights["word_emb_layer.embedding.weight"]
    weights["projection.weight"] = weights["projection.weight"][:, word_dim:].clone()
    torch.save(weights, directory / TOKEN_EMBEDDER_WEIGHTS)
    os.remove(directory / WORD_TABLE)
    return str(directory)


def _model(name, without_words):
    return MODEL if name == "words" else without_words


def _session(path):
    import onnxruntime

    return onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _run(session, ids):
    names = [output.name for output in session.get_outputs()]
    inputs = onnx_inputs(ids, WIDTH)
    fed = {model_input.name: inputs[model_input.name] for model_input in session.get_inputs()}
    return dict(zip(names, session.run(None, fed)))


def _export(bilm, path, **kwargs):
    from elmo_plugin.elmo.formats.onnx.export import export_onnx

    return export_onnx(bilm, str(path), **kwargs)


@needs_onnx
@pytest.mark.parametrize("name", ["words", "no_words"])
def test_onnx_runtime_gives_our_elmo_outputs(name, without_words, tmp_path):
    from elmo_plugin.elmo.formats.onnx.export import ScalarMixWeights, parameter_bytes

    elmo = Elmo(_model(name, without_words), dropout=0.0, scalar_mix_parameters=MIX)
    elmo.scalar_mixes[0].gamma.data.fill_(0.5)
    bilm = elmo.bilm
    assert isinstance(bilm, EfmlBiLm)
    ids = bilm.batch_to_ids(SENTENCES)
    with torch.no_grad():
        ours = elmo(ids)
        bilm_output = bilm(ids)
    path = _export(bilm, tmp_path / "elmo.onnx", scalar_mix=ScalarMixWeights(MIX, 0.5))
    session = _session(path)
    expected_inputs = ["character_ids", "word_ids"] if name == "words" else ["character_ids"]
    assert [i.name for i in session.get_inputs()] == expected_inputs
    theirs = _run(session, ids.numpy())

    assert theirs["layers"].shape[0] == bilm.num_layers == 3
    assert_equals_elmo(theirs, ours, bilm_output)
    # The recurrence is a loop: the file is what the model holds, its weights and its tables
    # (the text of char.dic and word.dic, which the tokenizer needs), and a graph of a few
    # hundred nodes whatever the model's size: a tenth of the EFML-trained fixture's weights,
    # nothing beside a published model's hundreds of megabytes.
    tables = sum(len(text.encode("utf-8")) for text in table_metadata(bilm.ids).values())
    graph = os.path.getsize(path) - parameter_bytes(bilm) - tables
    assert 0 < graph < 20_000
    if name == "words":
        assert os.path.getsize(path) < 1.1 * (parameter_bytes(bilm) + tables)


@needs_onnx
def test_with_sentence_boundaries_the_outputs_are_the_bilms_activations(tmp_path):
    bilm = load_efml_bilm(MODEL)
    ids = bilm.batch_to_ids(SENTENCES)
    with torch.no_grad():
        ours = bilm(ids)
    theirs = _run(_session(_export(bilm, tmp_path / "m.onnx", keep_sentence_boundaries=True)), ids)
    assert (theirs["mask"] == ours["mask"].numpy()).all()
    for layer, activations in zip(theirs["layers"], ours["activations"]):
        numpy.testing.assert_allclose(layer, activations.numpy(), rtol=0, atol=TOLERANCE)


@needs_onnx
@pytest.mark.parametrize("name", ["words", "no_words"])
def test_the_reference_tokenizer_gives_our_ids_from_the_metadata(name, without_words, tmp_path):
    bilm = load_efml_bilm(_model(name, without_words))
    metadata = _session(_export(bilm, tmp_path / "m.onnx")).get_modelmeta().custom_metadata_map
    assert (WORDS_KEY in metadata) == (name == "words")
    tokenizer = onnx_efml_tokenizer.EfmlTokenizer(
        metadata[CHARACTERS_KEY], metadata.get(WORDS_KEY), WIDTH
    )
    batches: List[List[List[str]]] = [SENTENCES, [[]], []]
    for sentences in batches:
        expected = onnx_inputs(bilm.batch_to_ids(sentences).numpy(), WIDTH)
        characters, words = tokenizer.sentences_to_ids(sentences)
        assert numpy.array_equal(
            numpy.array(characters, dtype=numpy.int64).reshape(expected["character_ids"].shape),
            expected["character_ids"],
        )
        if name == "words":
            assert numpy.array_equal(
                numpy.array(words, dtype=numpy.int64).reshape(expected["word_ids"].shape),
                expected["word_ids"],
            )


def test_the_tables_text_keeps_every_token():
    # The whitespace token (U+3000 as EFML reads it), and line breaks other than \n.
    table = {"<oov>": 0, "\u3000": 1, "\u2028": 2, "\x85": 3, "a b": 4, "\r": 5, "<": 6}
    assert onnx_efml_tokenizer.read_table(table_text(table)) == table


# Runs in an interpreter that sees the standard library, onnxruntime, numpy and the reference
# tokenizer only; it fails if torch, AllenNLP or elmo_plugin can be imported.
RUNNER = """
    import importlib.util, json, sys
    for name in ("torch", "allennlp", "elmo_plugin"):
        assert importlib.util.find_spec(name) is None, f"{name} is importable"
    import numpy, onnxruntime
    from efml_tokenizer import EfmlTokenizer
    model, sentences, output = sys.argv[1:]
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    metadata = session.get_modelmeta().custom_metadata_map
    width = session.get_inputs()[0].shape[2]
    tokenizer = EfmlTokenizer(metadata["efml_characters"], metadata.get("efml_words"), width)
    with open(sentences) as handle:
        characters, words = tokenizer.sentences_to_ids(json.load(handle))
    ids = {"character_ids": characters, "word_ids": words}  # word_ids: models with words
    inputs = {i.name: numpy.array(ids[i.name], dtype=numpy.int64) for i in session.get_inputs()}
    layers, mask = session.run(["layers", "mask"], inputs)
    numpy.savez(output, layers=layers, mask=mask)
"""


@needs_onnx
def test_the_model_runs_with_onnxruntime_and_numpy_only(tmp_path):
    bilm = load_efml_bilm(MODEL)
    model = _export(bilm, tmp_path / "elmo.onnx")
    root = bare_environment(tmp_path / "bare", onnx_efml_tokenizer, RUNNER)
    sentences = [s for s in SENTENCES if s]
    (tmp_path / "sentences.json").write_text(json.dumps(sentences))
    arguments = [model, str(tmp_path / "sentences.json"), str(tmp_path / "out.npz")]
    result = run_bare(root, arguments, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    ids = bilm.batch_to_ids(sentences)
    with torch.no_grad():
        ours = bilm(ids)
    theirs = numpy.load(tmp_path / "out.npz")
    for layer, activations in zip(theirs["layers"], ours["activations"]):
        expected, mask = remove_sentence_boundaries(activations, ours["mask"])
        numpy.testing.assert_allclose(layer, expected.numpy(), rtol=0, atol=TOLERANCE)
    assert (theirs["mask"] == mask.numpy()).all()
