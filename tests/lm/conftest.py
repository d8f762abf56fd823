from typing import Dict, List

import pytest
import torch
from allennlp.data import Batch, Instance, Vocabulary

from elmo_plugin.lm.dataset_readers import BilmCorpusReader

# The machine running the tests is shared: one thread avoids OpenMP threads spinning while
# descheduled, which makes a training step tens of times slower under load.
torch.set_num_threads(1)

# A biLM small enough to train in seconds: the full architecture (character CNN, highway,
# projection, two LSTM layers with projections, clipping and a residual connection).
TINY_BILM = {
    "char_cnn": {"embedding": {"dim": 4}, "filters": [[1, 8], [2, 8], [3, 16]], "n_highway": 1},
    "lstm": {
        "dim": 32,
        "projection_dim": 16,
        "n_layers": 2,
        "cell_clip": 3,
        "proj_clip": 3,
        "use_skip_connections": True,
    },
}


@pytest.fixture
def tiny_bilm() -> Dict:
    return {"char_cnn": dict(TINY_BILM["char_cnn"]), "lstm": dict(TINY_BILM["lstm"])}


def tensorize(instances: List[Instance], vocabulary: Vocabulary, reader: BilmCorpusReader):
    for instance in instances:
        reader.apply_token_indexers(instance)
    batch = Batch(instances)
    batch.index_instances(vocabulary)
    return batch.as_tensor_dict()
