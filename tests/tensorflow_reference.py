"""
Parity with TensorFlow's own ELMo code (bilm-tf), kept as ELMoForManyLangs' is: the references
in fixtures/tensorflow were made once by fixtures/tensorflow/make_bilm_checkpoint.py in a
TensorFlow venv apart from the project's, and the tests compare with them. The checks take the
folder of a fixture set, so that a test marked `tf_reference` can make a fresh set with
TensorFlow and check it the same way; it runs only where `ELMO_TF_PYTHON` names the Python of
such a venv, made so (about 1.8 GB):

    python3.12 -m venv /work/tfvenv
    /work/tfvenv/bin/pip install tensorflow-cpu==2.21.0 simple-elmo==0.9.2
    /work/tfvenv/bin/pip install --no-deps tf-keras==2.21.0 tensorflow-hub==0.16.1 bilm==0.1.post5
    ELMO_TF_PYTHON=/work/tfvenv/bin/python pytest -m tf_reference tests

The Hub module's maker also needs tensorflow-hub 0.15.0, the last to write TF1 modules, apart:
`/work/tfvenv/bin/pip install --no-deps --target /work/hub015 tensorflow-hub==0.15.0
"setuptools<81"`, named by `ELMO_TF_HUB015=/work/hub015` (its test skips without it).
"""

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict

import numpy
import torch

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.bilm.characters.ids import batch_to_ids
from elmo_plugin.elmo.formats.tensorflow.checkpoint import Checkpoint
from elmo_plugin.elmo.formats.tensorflow.hub_module import module_outputs
from elmo_plugin.elmo.formats.tensorflow.language_model import CheckpointLanguageModel
from tests.paths import FIXTURES, TF_PYTHON_VARIABLE

STORED = FIXTURES / "tensorflow"
MAKERS = (STORED / "make_bilm_checkpoint.py", STORED / "make_simple_elmo_references.py")
HUB_MAKER = STORED / "make_hub_module.py"
# Where tensorflow-hub 0.15.0 (the last to write TF1 modules) was installed with --target.
HUB_PATH_VARIABLE = "ELMO_TF_HUB015"
CHECKPOINT_FOLDER = "bilm_checkpoint"
TENSORS_AND_LAYERS = "bilm_checkpoint_reference.npz"
PERPLEXITY = "bilm_checkpoint_perplexity.json"
SUBSTITUTES = "simple_elmo_substitutes.json"
SIMPLE_ELMO_VECTORS = "simple_elmo_vectors.npz"
HUB_OUTPUTS = "hub_module_reference.npz"
TENSOR_KEY = "tensor/"


def sentences(directory: Path = STORED):
    return json.loads((directory / PERPLEXITY).read_text())["sentences"]


def checkpoint_prefix(directory: Path = STORED) -> str:
    """The one checkpoint of the fixture set's folder."""
    folder = directory / CHECKPOINT_FOLDER
    (index,) = folder.glob("*.index")
    return str(index)[: -len(".index")]


def assert_tensors_are_tensorflows(directory: Path = STORED) -> None:
    """Every tensor equals `tf.train.load_checkpoint(...).get_tensor`'s, bit for bit."""
    checkpoint = Checkpoint(checkpoint_prefix(directory))
    reference = numpy.load(directory / TENSORS_AND_LAYERS)
    names = {key[len(TENSOR_KEY) :] for key in reference if key.startswith(TENSOR_KEY)}
    assert set(checkpoint.names()) == names
    for name in names:
        stored, got = reference[TENSOR_KEY + name], checkpoint.tensor(name)
        assert got.dtype == stored.dtype and got.shape == stored.shape, name
        assert got.tobytes() == stored.tobytes(), name


def assert_layers_are_bilm_tfs(embedder: ElmoEmbedder, directory: Path = STORED) -> None:
    """The three layers equal bilm-tf's inference graph's, to 1e-5."""
    reference = numpy.load(directory / TENSORS_AND_LAYERS)["layers"]
    batch = sentences(directory)
    for number, (sentence, layers) in enumerate(zip(batch, embedder.embed_batch(batch))):
        expected = reference[number, :, : len(sentence)]
        numpy.testing.assert_allclose(layers, expected, atol=1e-5, rtol=0)


def assert_losses_are_bilm_tfs(model: CheckpointLanguageModel, directory: Path = STORED) -> None:
    """The loss of each step and each sentence's perplexity equal bilm-tf's `test()`'s, to
    1e-4 relative."""
    reference = json.loads((directory / PERPLEXITY).read_text())
    found = model.step_losses(reference["sentences"])
    for expected, (forward, backward) in zip(reference["results"], found):
        steps = 0.5 * (forward + backward)
        numpy.testing.assert_allclose(steps, expected["step_losses"], rtol=1e-4)
        perplexity = numpy.exp(steps.mean())
        numpy.testing.assert_allclose(perplexity, expected["perplexity"], rtol=1e-4)


def _by_candidate(direction: Dict[str, Any]) -> Dict[str, float]:
    return dict(zip(direction["candidate_words"], direction["logp"]))


def assert_substitutes_are_simple_elmos(model: Any, directory: Path = STORED) -> None:
    """`model.substitutes(sentences, topn)` (a `CheckpointLanguageModel`'s): each word's top
    candidates and their scores equal simple_elmo's (its scores are rounded to 4 places; its
    candidates in `argpartition`'s order, ours best first)."""
    reference = json.loads((directory / SUBSTITUTES).read_text())
    found = model.substitutes(reference["sentences"], topn=reference["topn"])
    assert [len(sentence) for sentence in found] == [len(s) for s in reference["sentences"]]
    for ours, theirs in zip(found, reference["substitutes"]):
        for word, expected in zip(ours, theirs):
            assert word["word"] == expected["word"]
            for direction in ("forward", "backward"):
                got, wanted = _by_candidate(word[direction]), _by_candidate(expected[direction])
                assert got.keys() == wanted.keys(), (word["word"], direction)
                for candidate, score in wanted.items():
                    assert abs(got[candidate] - score) <= 1.5e-4, (word["word"], candidate)
                assert word[direction]["logp"] == sorted(word[direction]["logp"], reverse=True)


def assert_vectors_are_simple_elmos(model: Any, directory: Path = STORED) -> None:
    """`get_elmo_vectors` (each `layers`) and `get_elmo_vector_average` of an
    `elmo_plugin.embedding.simple_elmo.ElmoModel` loaded with simple_elmo's batch size equal
    simple_elmo's own, to 1e-5."""
    reference = numpy.load(directory / SIMPLE_ELMO_VECTORS)
    assert model.batch_size == int(reference["batch"])
    texts = sentences(directory)
    for layers in ("average", "top", "all"):
        found = model.get_elmo_vectors(texts, layers=layers)
        numpy.testing.assert_allclose(found, reference[f"vectors_{layers}"], atol=1e-5, rtol=0)
    found = model.get_elmo_vector_average(texts)
    numpy.testing.assert_allclose(found, reference["vector_average"], atol=1e-5, rtol=0)


def assert_module_outputs_are_hubs(bilm: Any, aggregation: Any, directory: Path = STORED) -> None:
    """The module's outputs (`module_outputs`) equal `hub.Module`'s, to 1e-5: `elmo` and
    `default` everywhere, the layers at the words (bilm-tf leaves other values past them)."""
    reference = numpy.load(directory / HUB_OUTPUTS)
    batch = sentences(directory)
    with torch.no_grad():
        found = module_outputs(bilm, aggregation, batch_to_ids(batch))
    for name in ("elmo", "default"):
        numpy.testing.assert_allclose(found[name].numpy(), reference[name], atol=1e-5, rtol=0)
    for name in ("word_emb", "lstm_outputs1", "lstm_outputs2"):
        for row, sentence in enumerate(batch):
            numpy.testing.assert_allclose(
                found[name][row, : len(sentence)].numpy(),
                reference[name][row, : len(sentence)],
                atol=1e-5,
                rtol=0,
            )


def make_with_tensorflow(directory: Path, hub_module: bool = False) -> None:
    """A fresh fixture set in `directory`, made by TensorFlow (`ELMO_TF_PYTHON`); with
    `hub_module`, the TF1 Hub module too (tensorflow-hub 0.15.0 in `ELMO_TF_HUB015`)."""
    environment = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="2")
    if hub_module:
        environment["PYTHONPATH"] = os.environ[HUB_PATH_VARIABLE]
    for maker in MAKERS + ((HUB_MAKER,) if hub_module else ()):
        subprocess.run(
            [os.environ[TF_PYTHON_VARIABLE], str(maker), str(directory)],
            check=True,
            env=environment,
            stdout=subprocess.DEVNULL,
        )
