"""`ElmoEmbedder(state="carried")`: AllenNLP 0.9's `ElmoEmbedder`, whose LSTM states went from
each batch to the next, reproduced over batches of changing sizes; simple_elmo's `warmup`."""

import os
from itertools import islice
from typing import Iterable, Iterator, List

import numpy
import pytest
import torch
from allennlp.modules.elmo import _ElmoBiLm, batch_to_ids, remove_sentence_boundaries

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo import load_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml.model import load_efml_bilm

EFML_MODEL = os.path.join(os.path.dirname(__file__), "..", "fixtures", "efml", "model")


class AllenNlp09Embedder:
    """0.9's `allennlp.commands.elmo.ElmoEmbedder` (removed in 1.0), its methods as 0.9 wrote
    them, over the stateful `_ElmoBiLm` that AllenNLP 2.10 still has, unchanged since 0.9."""

    def __init__(self, options: str, weights: str) -> None:
        self.elmo_bilm = _ElmoBiLm(options, weights)

    def batch_to_embeddings(self, batch):
        output = self.elmo_bilm(batch_to_ids(batch))
        without = [
            remove_sentence_boundaries(layer, output["mask"]) for layer in output["activations"]
        ]
        return torch.cat([layer.unsqueeze(1) for layer, _ in without], dim=1), without[0][1]

    def embed_batch(self, batch) -> List[numpy.ndarray]:
        if batch == [[]]:
            return [numpy.zeros((3, 0, 32), dtype=numpy.float32)]
        embeddings, mask = self.batch_to_embeddings(batch)
        lengths = [int(mask[row].sum()) for row in range(len(batch))]
        return [embeddings[row, :, :length].numpy() for row, length in enumerate(lengths)]

    def embed_sentence(self, sentence) -> numpy.ndarray:
        return self.embed_batch([sentence])[0]

    def embed_sentences(self, sentences: Iterable, batch_size: int) -> Iterator[numpy.ndarray]:
        iterator = iter(sentences)  # 0.9's `lazy_groups_of`
        while True:
            batch = list(islice(iterator, batch_size))
            if not batch:
                return
            yield from self.embed_batch(batch)


def assert_all_close(ours, theirs) -> None:
    assert len(ours) == len(theirs)
    for mine, old in zip(ours, theirs):
        assert mine.shape == old.shape
        numpy.testing.assert_allclose(mine, old, atol=1e-5, rtol=0)


def calls(sentences, long_sentence):
    """Successive calls of 0.9's API, of 4, 7, 1, 3, 5, 5, 3, 4 (one empty), 1 (empty) and 2
    sentences: growing, shrinking, a long one past `max_tokens`."""
    s = sentences
    return [
        lambda e: e.embed_batch(s[0:4]),
        lambda e: e.embed_batch(s[4:11]),
        lambda e: [e.embed_sentence(s[11])],
        lambda e: [layers.numpy() for layers in e.batch_to_embeddings(s[12:15])[0]],
        lambda e: list(e.embed_sentences(s[15:28], batch_size=5)),
        lambda e: e.embed_batch(s[28:30] + [[]] + s[0:1]),
        lambda e: e.embed_batch([[]]),
        lambda e: e.embed_batch([long_sentence, s[2]]),
    ]


# The CPU's packed path, and the GPU's dense one sorted by length (here run on the CPU).
@pytest.mark.parametrize("execution", ["auto", {"fused": True, "sorted_inference": True}])
def test_carried_states_equal_allennlp_09_over_batches_of_changing_sizes(
    elmo_options, elmo_weights, sentences, execution
):
    long_sentence = [f"w{i}" for i in range(70)]
    ours = ElmoEmbedder(
        elmo_options, elmo_weights, max_tokens=64, execution=execution, state="carried"
    )
    theirs = AllenNlp09Embedder(elmo_options, elmo_weights)
    stateless = ElmoEmbedder(elmo_options, elmo_weights)
    with torch.no_grad():
        for number, call in enumerate(calls(sentences, long_sentence)):
            expected = call(theirs)
            assert_all_close(call(ours), expected)
            if number == 1:  # carried states: not what a fresh run gives
                assert not numpy.allclose(call(stateless)[0], expected[0], atol=1e-4)


def test_reset_states_starts_afresh(elmo_options, elmo_weights, sentences):
    carried = ElmoEmbedder(elmo_options, elmo_weights, state="carried")
    first = carried.embed_batch(sentences[:5])
    carried.embed_batch(sentences[5:9])
    carried.reset_states()
    for again, before in zip(carried.embed_batch(sentences[:5]), first):
        numpy.testing.assert_array_equal(again, before)


def test_the_stateless_default_is_unchanged(elmo_options, elmo_weights, sentences):
    default = ElmoEmbedder(elmo_options, elmo_weights)
    named = ElmoEmbedder(elmo_options, elmo_weights, state="stateless")
    once = default.embed_batch(sentences[:6])
    default.embed_batch(sentences[6:20])
    for a, b, c in zip(once, default.embed_batch(sentences[:6]), named.embed_batch(sentences[:6])):
        numpy.testing.assert_array_equal(a, b)
        numpy.testing.assert_array_equal(a, c)
    warmed = named.embed(sentences[:6], batch_size=4, warmup=True)
    numpy.testing.assert_array_equal(warmed, named.embed(sentences[:6], batch_size=4))


def simple_elmo_get_elmo_vectors(options, weights, texts, batch_size, warmup):
    """simple_elmo's `get_elmo_vectors(texts, warmup, layers="all")` in a new session (its LSTM
    states zero, then carried from batch to batch), over AllenNLP's stateful biLM: `warmup`
    runs the first batch once first, its vectors dropped."""
    bilm = AllenNlp09Embedder(options, weights)
    batches = [texts[start : start + batch_size] for start in range(0, len(texts), batch_size)]
    if warmup:
        bilm.embed_batch(batches[0])
    return [layers for batch in batches for layers in bilm.embed_batch(batch)]


@pytest.mark.parametrize("warmup", [False, True])
def test_embed_with_warmup_equals_simple_elmo(elmo_options, elmo_weights, sentences, warmup):
    texts = sentences[:11]
    carried = ElmoEmbedder(elmo_options, elmo_weights, state="carried")
    with torch.no_grad():
        expected = simple_elmo_get_elmo_vectors(elmo_options, elmo_weights, texts, 4, warmup)
    vectors = carried.embed(texts, layers="all", batch_size=4, warmup=warmup)
    for row, layers in enumerate(expected):
        numpy.testing.assert_allclose(vectors[row, :, : layers.shape[1]], layers, atol=1e-5)
    if warmup:  # the first batch is not what it gives without
        assert not numpy.allclose(
            vectors[0, -1], carried_vectors(elmo_options, elmo_weights, texts)[0, -1], atol=1e-4
        )


def carried_vectors(options, weights, texts):
    return ElmoEmbedder(options, weights, state="carried").embed(texts, layers="all", batch_size=4)


def test_from_bilm_carries_states_and_names_the_choices(elmo_options, elmo_weights, sentences):
    carried = ElmoEmbedder.from_bilm(load_bilm(elmo_options, elmo_weights), state="carried")
    theirs = AllenNlp09Embedder(elmo_options, elmo_weights)
    with torch.no_grad():
        for batch in (sentences[:3], sentences[3:8], sentences[8:10]):
            assert_all_close(carried.embed_batch(batch), theirs.embed_batch(batch))
    with pytest.raises(ConfigurationError, match="'stateless', 'carried'.*'allennlp-0.9'"):
        ElmoEmbedder(elmo_options, elmo_weights, state="allennlp-0.9")


def test_embed_file_refuses_carried_states(elmo_options, elmo_weights, tmp_path):
    carried = ElmoEmbedder(elmo_options, elmo_weights, state="carried")
    (tmp_path / "in.txt").write_text("a b\nc\n")
    with pytest.raises(ConfigurationError, match="carried.*embed_sentences"):
        carried.embed_file(str(tmp_path / "in.txt"), str(tmp_path / "out.hdf5"))
    assert not (tmp_path / "out.hdf5").exists()


def test_carried_states_on_an_efml_model_as_its_stateful_bilm(sentences):
    carried = ElmoEmbedder(EFML_MODEL, state="carried")
    bilm = load_efml_bilm(EFML_MODEL, stateful=True).eval()
    with torch.no_grad():
        for batch in (sentences[:3], sentences[3:9], sentences[9:11]):
            layers = torch.stack(bilm(bilm.batch_to_ids(batch))["activations"])
            expected = [layers[:, row, 1 : len(s) + 1].numpy() for row, s in enumerate(batch)]
            assert_all_close(carried.embed_batch(batch), expected)


class _FailingRun(RuntimeError):
    pass


def _fail_on_run(monkeypatch, bilm, failing_run: int) -> None:
    """The biLM's LSTM raises on its `failing_run`-th run from now (1 the next)."""
    forward, runs = type(bilm.lstm).forward, []

    def counted(lstm, *args, **kwargs):
        runs.append(1)
        if len(runs) == failing_run:
            raise _FailingRun("run failed")
        return forward(lstm, *args, **kwargs)

    monkeypatch.setattr(type(bilm.lstm), "forward", counted)


@pytest.mark.parametrize("call", ["embed", "embed_warmup", "embed_sentences"])
def test_a_call_that_fails_leaves_the_carried_states_as_they_were(
    elmo_options, elmo_weights, sentences, monkeypatch, call
):
    embedder = ElmoEmbedder(elmo_options, elmo_weights, state="carried")
    embedder.embed_batch(sentences[:3])
    before = embedder.elmo_bilm._states
    _fail_on_run(monkeypatch, embedder.elmo_bilm, failing_run=2)  # after a run that succeeded
    with pytest.raises(_FailingRun):
        if call == "embed_sentences":
            list(embedder.embed_sentences(sentences[:4], batch_size=2))
        else:
            embedder.embed(sentences[:4], batch_size=2, warmup=call == "embed_warmup")
    after = embedder.elmo_bilm._states
    assert before is not None and after is not None
    assert torch.equal(after.hidden, before.hidden) and torch.equal(after.memory, before.memory)


def test_wrong_argument_types_are_one_line_errors(elmo_options, elmo_weights, sentences):
    embedder = ElmoEmbedder(elmo_options, elmo_weights, state="carried")
    with pytest.raises(ConfigurationError, match="batch_size must be a positive integer, got '2'"):
        embedder.embed(sentences[:3], batch_size="2", warmup=True)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="cuda_device must be an integer.*str '0'"):
        ElmoEmbedder(elmo_options, elmo_weights, cuda_device="0")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="cuda_device must be an integer"):
        ElmoEmbedder.from_bilm(embedder.elmo_bilm, cuda_device=True)
