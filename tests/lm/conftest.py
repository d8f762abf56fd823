import json
import os
import sys
from typing import Any, Dict, List, Union
from unittest import mock

import pytest
from allennlp.commands import main
from allennlp.data import Batch, Instance, Vocabulary

from elmo_plugin.allennlp.lm.dataset_readers import BilmCorpusReader

# A biLM small enough to train in seconds: the full architecture (character CNN, highway,
# projection, two LSTM layers with projections, clipping and a residual connection).
TINY_BILM: Dict[str, Dict[str, Any]] = {
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


def run_allennlp(*argv: str) -> None:
    with mock.patch.object(sys, "argv", ["allennlp", *argv]):
        main()


def allennlp_train(
    config: str, serialization_dir: Union[str, os.PathLike], overrides: Dict[str, Any]
) -> None:
    run_allennlp("train", config, "-s", str(serialization_dir), "-o", json.dumps(overrides))


def one_file_corpus(path: str) -> Dict[str, Any]:
    """Overrides that train, validate and build the vocabulary (every word) on one small file."""
    return {
        "train_data_path": path,
        "validation_data_path": path,
        "vocabulary.corpus": path,
        "vocabulary.min_count": 1,
    }
