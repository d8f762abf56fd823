"""simple_elmo's API, opt-in: `ElmoModel` gives simple_elmo's own outputs (stored by
fixtures/tensorflow/make_simple_elmo_references.py from simple-elmo 0.9.2 on TensorFlow) for the
same biLM, with its warmup, carried states and batch size."""

import numpy
import pytest

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.simple_elmo import LOADED, ElmoModel
from tests.tensorflow_reference import (
    SIMPLE_ELMO_VECTORS,
    STORED,
    assert_substitutes_are_simple_elmos,
    assert_vectors_are_simple_elmos,
    sentences,
)

CHECKPOINT = str(STORED / "bilm_checkpoint")
BATCH = int(numpy.load(STORED / SIMPLE_ELMO_VECTORS)["batch"])


@pytest.fixture(scope="module")
def model():
    loaded = ElmoModel()
    assert loaded.load(CHECKPOINT, max_batch_size=BATCH) == LOADED
    return loaded


def test_vectors_and_sentence_averages_equal_simple_elmos(model):
    assert (model.vector_size, model.n_layers) == (16, 3)
    assert_vectors_are_simple_elmos(model)


def test_warmup_and_the_batch_size_change_the_vectors_as_in_simple_elmo(model):
    texts = sentences()
    warmed = model.get_elmo_vectors(texts)
    cold = model.get_elmo_vectors(texts, warmup=False)
    assert not numpy.allclose(warmed[:BATCH], cold[:BATCH], atol=1e-6)
    again = model.get_elmo_vectors(texts)  # each call starts from zero states
    numpy.testing.assert_array_equal(again, warmed)


def test_substitutes_need_the_checkpoint_loaded_full():
    full = ElmoModel()
    full.load(CHECKPOINT, max_batch_size=1, full=True)

    class Strings:  # simple_elmo's get_elmo_substitutes takes whitespace-joined sentences
        def substitutes(self, batch, topn):
            return full.get_elmo_substitutes([" ".join(words) for words in batch], topn=topn)

    assert_substitutes_are_simple_elmos(Strings())


def test_misuse_is_a_clear_error(model):
    with pytest.raises(ConfigurationError, match="load a training checkpoint with full=True"):
        model.get_elmo_substitutes(["a cat"])
    with pytest.raises(ConfigurationError, match="layers must be one of"):
        model.get_elmo_vectors([["a"]], layers="bottom")
    with pytest.raises(ConfigurationError, match="a TensorFlow session has no use here"):
        model.get_elmo_vectors([["a"]], session=object())
    with pytest.raises(ConfigurationError, match="mixing words and layers"):
        model.get_elmo_vector_average([["a"]], layers="all")
    with pytest.raises(ConfigurationError, match="no model loaded"):
        ElmoModel().get_elmo_vectors([["a"]])
