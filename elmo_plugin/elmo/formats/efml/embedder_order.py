"""
The order in which ELMoForManyLangs' `Embedder.sents2elmo` runs sentences through its biLM,
which is stateful: each batch starts from the LSTM states the previous batch left in its rows,
so a sentence's vectors depend on this order. To reproduce them, run a stateful `EfmlBiLm`
(`load_efml_bilm(..., stateful=True)`) over `efml_batches(...)` in order, each batch's
sentences in the order given, starting from the states of the same earlier calls:
`embed_in_efml_order` does.
"""

import random
from typing import Callable, List, Sequence

import numpy
import torch

from elmo_plugin.elmo.bilm.model import ElmoBiLm

Shuffle = Callable[[List[int]], None]


def efml_batches(
    sentences: Sequence[Sequence[str]], batch_size: int, shuffle: Shuffle = random.shuffle
) -> List[List[int]]:
    """
    The indices of `sentences` in each batch that `sents2elmo` runs, in its order: all
    sentences sorted longest first (a stable sort), cut into batches of `batch_size`, the
    batches then shuffled by `shuffle`, which is `random.shuffle` in EFML, so that the order
    is that of EFML's call only from the same state of `random` (e.g. after `random.seed(n)`
    before both; EFML's call draws nothing else from it).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = sorted(range(len(sentences)), key=lambda index: -len(sentences[index]))
    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    permutation = list(range(len(batches)))
    shuffle(permutation)
    return [batches[index] for index in permutation]


def embed_in_efml_order(
    bilm: ElmoBiLm,
    sentences: Sequence[Sequence[str]],
    batch_size: int,
    shuffle: Shuffle = random.shuffle,
) -> List[numpy.ndarray]:
    """
    Each sentence's layers, `(L + 1, len(sentence), dim)`, with `bilm` run over
    `efml_batches(sentences, batch_size, shuffle)` in order: with a stateful biLM,
    `sents2elmo(sentences, output_layer=-2)`'s vectors, `random` in the same state.
    """
    results: List[numpy.ndarray] = [numpy.zeros(0)] * len(sentences)
    with torch.no_grad():
        for batch in efml_batches(sentences, batch_size, shuffle):
            rows = [sentences[index] for index in batch]
            device = next(bilm.parameters()).device
            layers = torch.stack(bilm(bilm.batch_to_ids(rows).to(device))["activations"]).cpu()
            for row, index in enumerate(batch):
                length = len(sentences[index])
                results[index] = layers[:, row, 1 : length + 1].numpy().copy()
    return results
