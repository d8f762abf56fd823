"""One embedder, or one `Elmo` in inference, shared by several threads (a web server's, a pool's)
gives each call what one thread gives: the character CNN's token type cache, the one thing a
stateless biLM changes as it runs, takes one call at a time. A small cache makes every call
evict what others are reading."""

import random
import sys
import threading
from typing import Callable, List

import numpy
import pytest
import torch

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo import Elmo, batch_to_ids, load_bilm
from elmo_plugin.elmo.bilm.characters.token_type_cache import TokenTypeCache

THREADS = 4
CALLS = 24
CACHE_SIZE = 16
CURRENT = threading.local()


@pytest.fixture(autouse=True)
def often_switching_threads():
    """Python switches threads every 5 ms; the tiny biLM's calls take about that: switching
    far more often interleaves the threads' calls at many more points."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)


def _batches(sentences) -> List[List[List[str]]]:
    chosen = random.Random(0)
    return [chosen.sample(sentences, 4) for _ in range(CALLS)]


def _in_threads(call: Callable[[List[List[str]]], List[numpy.ndarray]], batches) -> List:
    """`call` on each batch, by `THREADS` threads at once; `CURRENT.batch` is the batch a
    thread runs."""
    results: List = [None] * len(batches)

    def work(first: int) -> None:
        for index in range(first, len(batches), THREADS):
            CURRENT.batch = index
            results[index] = call(batches[index])

    threads = [threading.Thread(target=work, args=(first,)) for first in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _embedder(elmo_options, elmo_weights, cache_size: int) -> Callable:
    bilm = load_bilm(elmo_options, elmo_weights, char_cnn_cache_size=cache_size)
    return ElmoEmbedder.from_bilm(bilm).embed_batch


def _elmo(elmo_options, elmo_weights, cache_size: int) -> Callable:
    elmo = Elmo(elmo_options, elmo_weights, 1, dropout=0.0, char_cnn_cache_size=cache_size)
    elmo.eval()

    def call(batch: List[List[str]]) -> List[numpy.ndarray]:
        with torch.no_grad():
            return [elmo(batch_to_ids(batch))["elmo_representations"][0].numpy()]

    return call


@pytest.mark.parametrize("make", [_embedder, _elmo])
def test_threads_sharing_one_model_get_what_one_thread_gets(
    elmo_options, elmo_weights, sentences, make, monkeypatch
):
    batches = _batches(sentences)
    order: List[int] = []  # the batches in the order they took the cache
    take_cache = TokenTypeCache._encode_locked

    def recorded(cache, *args):
        order.append(CURRENT.batch)
        return take_cache(cache, *args)

    monkeypatch.setattr(TokenTypeCache, "_encode_locked", recorded)
    shared = _in_threads(make(elmo_options, elmo_weights, CACHE_SIZE), batches)
    monkeypatch.undo()
    # Against no cache: a call that read slots another call was reassigning is off by about 1.
    uncached = make(elmo_options, elmo_weights, 0)
    for got, batch in zip(shared, batches):
        for a, b in zip(got, uncached(batch)):
            numpy.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
    # Bit for bit, against one thread making the calls in the order they took the cache: a
    # cached type keeps the bits of the batch that encoded it, which may differ in the last
    # bits from another batch's on some BLAS builds (tests/elmo/test_character_encoder.py).
    assert sorted(order) == list(range(CALLS))
    one_thread = make(elmo_options, elmo_weights, CACHE_SIZE)
    for index in order:
        for a, b in zip(shared[index], one_thread(batches[index])):
            assert numpy.array_equal(a, b)
