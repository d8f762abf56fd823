"""
Our ELMoForManyLangs (EFML) loader against EFML's own `Embedder` (elmoformanylangs
0.0.4.post2, tests/efml_reference.py) on the EFML-trained fixture (fixtures/efml/model, made by
fixtures/efml/make_fixture.py): all three layers to 1e-5, on sentences with unseen characters,
unseen words, empty and overlong tokens, both stateless and in EFML's stateful, sorted order.
"""

import logging
import random

import numpy
import pytest

from elmo_plugin.elmo.formats.efml import load_efml_bilm
from elmo_plugin.elmo.formats.efml.embedder_order import embed_in_efml_order
from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder
from tests.efml_reference import SKIP_REASON, efml_available, import_efml
from tests.paths import FIXTURES

pytestmark = pytest.mark.skipif(not efml_available(), reason=SKIP_REASON)

MODEL = str(FIXTURES / "efml" / "model")
SENTENCES = [
    ["The", "history", "of", "the", "city", "was", "written", "in", "1850", "."],
    ["мама", "мыла", "раму", "и", "кот", "сидит"],
    # Characters the table lacks (<oov>), in Latin, Cyrillic and CJK; words it lacks.
    ["Zwölf", "ЖЁЛТЫЙ", "漢字", "€", "unheardofword"],
    # An empty token; tokens over max_characters_per_token (cut, words too, as EFML cuts).
    ["", "a" * 49, "b" * 48 + "xyz", "река" * 30],
    ["<bos>", "<eos>", "<pad>", "<oov>"],
    [],
    ["one"],
    ["a", "slightly", "longer", "sentence", "than", "most", "of", "the", "others", "here", "."],
    ["река", "течёт", "быстро"],
]


@pytest.fixture(scope="module")
def efml():
    package = import_efml()
    logging.getLogger("elmoformanylangs").setLevel(logging.ERROR)
    return package


def test_stateless_layers_equal_efmls_first_batch(efml):
    # EFML's first call over one batch starts from zero states: our default for every call.
    expected = efml.Embedder(MODEL, batch_size=64).sents2elmo(SENTENCES, output_layer=-2)
    embedder = ElmoEmbedder.from_bilm(load_efml_bilm(MODEL), max_tokens=40)
    got = embedder.embed_batch(SENTENCES)
    assert len(got) == len(expected)
    for sentence, ours, theirs in zip(SENTENCES, got, expected):
        assert ours.shape == theirs.shape == (3, len(sentence), 32)
        numpy.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5)


def test_stateful_sorted_layers_equal_efmls_over_several_calls(efml):
    # EFML carries each row's LSTM states to the next batch and across calls, in its own
    # order (sorted by length, the batches shuffled): batches of 4, 3, 2 sentences, two calls.
    embedder = efml.Embedder(MODEL, batch_size=4)
    bilm = load_efml_bilm(MODEL, stateful=True).eval()
    for seed, sentences in [(3, SENTENCES), (5, SENTENCES[2:] + SENTENCES[:1])]:
        random.seed(seed)
        expected = embedder.sents2elmo(sentences, output_layer=-2)
        random.seed(seed)
        got = embed_in_efml_order(bilm, sentences, 4)
        for sentence, ours, theirs in zip(sentences, got, expected):
            assert ours.shape == theirs.shape == (3, len(sentence), 32)
            numpy.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5)
