"""A float16 autocast training step of both coreference configs is finite (the character CNN's
float16 overflow that `embed_in_float32` guards against; see tests/tasks/test_amp.py)."""

import json

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.data.data_loaders import SimpleDataLoader
from allennlp.data.dataset_readers import DatasetReader
from allennlp.models import Model

import elmo_plugin.tasks.coref  # noqa: F401
from tests.tasks.coref.coref_small_overrides import SMALL
from tests.tasks.training_helpers import FIXTURE_BILM, bilm_files

pytestmark = pytest.mark.skipif(
    int(torch.__version__.split(".")[0]) < 2, reason="this torch's CPU autocast has no float16"
)


@pytest.mark.parametrize("config", ["coref_baseline", "coref_elmo"])
def test_a_float16_autocast_training_step_is_finite(config):
    overrides = {
        **SMALL,
        **(bilm_files("model.elmo", FIXTURE_BILM) if config == "coref_elmo" else {}),
    }
    path = f"elmo_plugin/training_configs/coref/{config}.jsonnet"
    params = Params.from_file(path, params_overrides=json.dumps(overrides))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(overrides["train_data_path"]))
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    loader = SimpleDataLoader(instances, 2)
    loader.index_with(vocab)
    with torch.autocast("cpu", dtype=torch.float16):
        loss = model(**next(iter(loader)))["loss"]
    loss.backward()
    assert torch.isfinite(loss)
    for name, parameter in model.named_parameters():
        if parameter.grad is not None:
            assert torch.isfinite(parameter.grad).all(), name
