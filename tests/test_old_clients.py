"""
Old clients of AllenNLP 0.9's `allennlp.commands.elmo.ElmoEmbedder`, driven for real on the test
biLM: flair 0.15.1's own `ELMoEmbeddings` through the opt-in stand-in
(`elmo_plugin.embedding.allennlp_commands_elmo`), embedding, pickled and reloaded, and in a
tagger flair saves and loads; and SeqVec's and bio_embeddings' call pattern.
"""

import importlib
import inspect
import pickle
import sys
from pathlib import Path

import numpy
import pytest
import torch
from allennlp.modules.elmo import _ElmoBiLm, batch_to_ids

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.formats.naming.published_models import PUBLISHED_MODELS
from elmo_plugin.embedding import allennlp_commands_elmo
from tests.flair_reference import SKIP_REASON, flair_available, import_flair

BATCH = [["The", "cat", "sat", "."], ["Hello", "world", "!"], ["naïve", "日本語"]]
# bio_embeddings' SeqVec warm-up sequence (T0922 from CASP), cut short.
PROTEIN = "MGSSHHHHHHSSGLVPRGSHMASVQKFPGDANCDGIVD"
needs_flair = pytest.mark.skipif(not flair_available(), reason=SKIP_REASON)


@pytest.fixture
def stand_in():
    module = allennlp_commands_elmo.install()
    yield module
    allennlp_commands_elmo.uninstall()


def test_importing_elmo_plugin_installs_no_stand_in():
    assert "allennlp.commands.elmo" not in sys.modules
    commands = sys.modules.get("allennlp.commands")
    assert commands is None or not hasattr(commands, "elmo")


def test_the_stand_in_gives_allennlp_0_9_names_and_uninstall_takes_them_back(stand_in):
    old = importlib.import_module("allennlp.commands.elmo")
    assert old is stand_in and issubclass(old.ElmoEmbedder, ElmoEmbedder)
    assert old.DEFAULT_OPTIONS_FILE == PUBLISHED_MODELS["original"].options_url
    assert old.DEFAULT_WEIGHT_FILE == PUBLISHED_MODELS["original"].weights_url
    allennlp_commands_elmo.uninstall()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("allennlp.commands.elmo")


def test_without_allennlp_the_stand_in_brings_bare_packages(monkeypatch):
    monkeypatch.setitem(sys.modules, "allennlp", None)  # as if AllenNLP were not installed
    monkeypatch.setitem(sys.modules, "allennlp.commands", None)
    try:
        allennlp_commands_elmo.install()
        import allennlp.commands.elmo

        assert allennlp.commands.elmo is allennlp_commands_elmo
        assert allennlp.__path__ == allennlp.commands.__path__ == []  # nothing else in them
    finally:
        allennlp_commands_elmo.uninstall()
    assert sys.modules["allennlp"] is None


def test_carried_states_are_reached_as_0_9_clients_reach_them(stand_in, elmo_options, elmo_weights):
    embedder = stand_in.ElmoEmbedder(elmo_options, elmo_weights, state="carried")
    lstm = embedder.elmo_bilm._elmo_lstm
    assert lstm._states == ()
    first = embedder.embed_batch(BATCH)
    carried = lstm._states
    assert len(carried) == 2 and all(isinstance(s, torch.Tensor) for s in carried)
    second = embedder.embed_batch(BATCH)
    lstm._states = carried  # what flair does with them, moved to its device
    numpy.testing.assert_array_equal(embedder.embed_batch(BATCH)[0], second[0])
    assert numpy.abs(second[0] - first[0]).max() > 1e-3  # the carried states mattered
    lstm._states = ()
    numpy.testing.assert_array_equal(embedder.embed_batch(BATCH)[0], first[0])
    with pytest.raises(ValueError, match="2 tensors"):
        lstm._states = carried[:1]


def allennlp_09_first_batch(options, weights, batch):
    """What 0.9's `ElmoEmbedder.embed_batch` gave for a first batch (its `_ElmoBiLm`)."""
    with torch.no_grad():
        output = _ElmoBiLm(options, weights)(batch_to_ids(batch))
    layers = torch.stack(output["activations"], dim=1)
    return [layers[row, :, 1 : 1 + len(tokens)].numpy() for row, tokens in enumerate(batch)]


def test_seqvec_and_bio_embeddings_call_pattern(stand_in, elmo_options, elmo_weights):
    from allennlp.commands.elmo import ElmoEmbedder as OldElmoEmbedder

    seqvec = OldElmoEmbedder(Path(elmo_options), Path(elmo_weights), cuda_device=-1)
    embedding = seqvec.embed_sentence(list(PROTEIN))
    residues = torch.tensor(embedding).sum(dim=0)  # SeqVec's per-residue vectors
    protein = torch.tensor(embedding).sum(dim=0).mean(dim=0)  # and per-protein vector
    (expected,) = allennlp_09_first_batch(elmo_options, elmo_weights, [list(PROTEIN)])
    assert embedding.shape == (3, len(PROTEIN), 32) and residues.shape == (len(PROTEIN), 32)
    numpy.testing.assert_allclose(residues.numpy(), expected.sum(0), atol=1e-5, rtol=0)
    numpy.testing.assert_allclose(protein.numpy(), expected.sum(0).mean(0), atol=1e-5, rtol=0)
    # bio_embeddings: 4 warm-up rounds, then `embed_batch([list(seq) for seq in batch])`.
    for _ in range(4):
        seqvec.embed_sentence(list(PROTEIN))
    batch = [PROTEIN, PROTEIN[:7], PROTEIN[5:]]
    for sequence, layers in zip(batch, seqvec.embed_batch([list(seq) for seq in batch])):
        alone = seqvec.embed_sentence(list(sequence))
        numpy.testing.assert_allclose(layers.sum(0).mean(0), alone.sum(0).mean(0), atol=1e-6)
    numpy.testing.assert_array_equal(seqvec.embed_sentence(list(PROTEIN)), embedding)


def embed_with_flair(embeddings, batch):
    from flair.data import Sentence

    sentences = [Sentence(tokens) for tokens in batch]
    embeddings.embed(sentences)
    return [torch.stack([token.get_embedding() for token in s]).numpy() for s in sentences]


@needs_flair
@pytest.mark.parametrize(
    "mode, pick",
    [
        ("all", lambda layers: numpy.concatenate(list(layers), axis=-1)),
        ("top", lambda layers: layers[-1]),
        ("average", lambda layers: layers.mean(axis=0)),
    ],
)
def test_flair_elmo_embeddings_embed_through_ours(stand_in, elmo_options, elmo_weights, mode, pick):
    import_flair()
    from flair.embeddings import ELMoEmbeddings

    embeddings = ELMoEmbeddings(
        options_file=elmo_options, weight_file=elmo_weights, embedding_mode=mode
    )
    assert isinstance(embeddings.ee, stand_in.ElmoEmbedder)
    ours = ElmoEmbedder(elmo_options, elmo_weights).embed_batch(BATCH)
    for theirs, layers in zip(embed_with_flair(embeddings, BATCH), ours):
        assert embeddings.embedding_length == theirs.shape[-1]
        numpy.testing.assert_allclose(theirs, pick(layers), atol=1e-6, rtol=0)


@pytest.fixture
def flair_elmo(stand_in, elmo_options, elmo_weights):
    import_flair()
    from flair.embeddings import ELMoEmbeddings

    return ELMoEmbeddings(options_file=elmo_options, weight_file=elmo_weights)


@needs_flair
def test_pickled_flair_elmo_embeddings_reload_and_embed_the_same(flair_elmo):
    before = embed_with_flair(flair_elmo, BATCH)
    saved = pickle.dumps(flair_elmo)
    allennlp_commands_elmo.uninstall()  # a pickle names our module: no stand-in needed
    # Unpickling runs flair's `__setstate__`, which moves `ee.elmo_bilm._elmo_lstm._states`.
    reloaded = pickle.loads(saved)
    assert reloaded.ee.elmo_bilm._elmo_lstm._states == ()
    # Equal to float32 rounding: a fresh character-type cache (the same after `clear_cache()`).
    for old, new in zip(before, embed_with_flair(reloaded, BATCH)):
        numpy.testing.assert_allclose(new, old, atol=1e-6, rtol=0)


@needs_flair
@pytest.mark.skipif(
    "weights_only" not in inspect.signature(torch.load).parameters,
    reason="flair 0.15.1 loads models with torch.load(weights_only=...), which needs torch >= 1.13",
)
def test_flair_saves_and_loads_a_tagger_holding_elmo_embeddings(flair_elmo, tmp_path, monkeypatch):
    from flair.data import Dictionary, Sentence
    from flair.embeddings import ELMoEmbeddings
    from flair.models import SequenceTagger

    tags = Dictionary(add_unk=False)
    for tag in ("O", "B-X", "I-X"):
        tags.add_item(tag)
    tagger = SequenceTagger(flair_elmo, tags, "ner", hidden_size=8, use_crf=False, use_rnn=False)
    # flair 0.15.1 saves embeddings by `to_params`, which its ELMoEmbeddings lacks, whatever
    # ELMo it holds (the README says so); a tagger it saved whole, as flair < 0.12 did, loads.
    with pytest.raises(NotImplementedError):
        tagger.save(tmp_path / "tagger.pt")
    monkeypatch.setattr(ELMoEmbeddings, "save_embeddings", lambda self, **_: self)
    tagger.save(tmp_path / "tagger.pt")
    loaded = SequenceTagger.load(tmp_path / "tagger.pt")
    assert isinstance(loaded.embeddings, ELMoEmbeddings)
    before = embed_with_flair(flair_elmo, BATCH)
    for old, new in zip(before, embed_with_flair(loaded.embeddings, BATCH)):
        numpy.testing.assert_allclose(new, old, atol=1e-6, rtol=0)
    sentence, again = Sentence(BATCH[0]), Sentence(BATCH[0])
    tagger.eval().predict(sentence)
    loaded.eval().predict(again)
    assert spans(again) == spans(sentence)
    assert scores(again) == pytest.approx(scores(sentence), abs=1e-5)


def spans(sentence):
    return [(label.data_point.text, label.value) for label in sentence.get_labels()]


def scores(sentence):
    return [label.score for label in sentence.get_labels()]
