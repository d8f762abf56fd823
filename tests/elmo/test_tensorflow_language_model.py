"""A training checkpoint's softmax as bilm-tf's `test()` uses it: the loss of each step (the
mean of the two directions') and each sentence's perplexity equal what bilm-tf's own `test()`
printed for the same checkpoint (fixtures/tensorflow/make_bilm_checkpoint.py), to 1e-4
relative."""

import json
import shutil

import numpy
import pytest

from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.formats.tensorflow.language_model import CheckpointLanguageModel
from tests.paths import FIXTURES
from tests.tensorflow_reference import (
    assert_losses_are_bilm_tfs,
    assert_substitutes_are_simple_elmos,
)

FOLDER = FIXTURES / "tensorflow" / "bilm_checkpoint"
REFERENCE = json.loads((FIXTURES / "tensorflow" / "bilm_checkpoint_perplexity.json").read_text())


@pytest.fixture(scope="module")
def language_model():
    return CheckpointLanguageModel(str(FOLDER))


def test_step_losses_and_perplexity_equal_bilm_tfs_test(language_model):
    assert_losses_are_bilm_tfs(language_model)


def test_perplexity_is_weighted_by_tokens_over_both_directions(language_model):
    sentences = REFERENCE["sentences"]
    losses = language_model.step_losses(sentences)
    both = numpy.concatenate([numpy.concatenate(pair) for pair in losses])
    found = language_model.perplexity(sentences, batch_size=3)
    numpy.testing.assert_allclose(found["perplexity"], numpy.exp(both.mean()), rtol=1e-6)
    forward = numpy.concatenate([pair[0] for pair in losses])
    numpy.testing.assert_allclose(found["forward_perplexity"], numpy.exp(forward.mean()))


def test_a_vocabulary_of_another_size_or_without_its_markers_is_refused(tmp_path):
    folder = tmp_path / "save"
    shutil.copytree(FOLDER, folder)
    vocabulary = (folder / "vocab.txt").read_text().splitlines()
    (folder / "vocab.txt").write_text("\n".join(vocabulary + ["extra"]) + "\n")
    with pytest.raises(ConfigurationError, match="has 26 words but the softmax .* has 25 rows"):
        CheckpointLanguageModel(str(folder))
    (folder / "vocab.txt").write_text("\n".join(vocabulary[3:]) + "\n")
    with pytest.raises(ConfigurationError, match="has no <S>, </S>, <UNK>"):
        CheckpointLanguageModel(str(folder))
    (folder / "vocab.txt").unlink()
    with pytest.raises(MissingFileError, match="needs the vocabulary it was trained with"):
        CheckpointLanguageModel(str(folder))


def test_substitutes_are_simple_elmos(language_model):
    assert_substitutes_are_simple_elmos(language_model)
