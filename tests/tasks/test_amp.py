"""AMP (`trainer.use_amp`) trains the task models without NaN: the float16 overflow that stopped
it (AllenNLP's `cnn` character encoder masks with float16's minimum, which rounds into values
that survive its clean-up) is reproduced under the CPU's float16 autocast, so these run in CI;
tests/test_devices.py trains with AMP on CUDA where there is one."""

import pytest
import torch

import elmo_plugin.allennlp.tasks.ner  # noqa: F401
from elmo_plugin.elmo import Elmo
from elmo_plugin.elmo.bilm.lstm.module import ElmoBiLstm
from tests.tasks.training_helpers import (
    FLOAT16_AUTOCAST_ON_CPU,
    assert_float16_autocast_step_is_finite,
)

pytestmark = pytest.mark.skipif(
    not FLOAT16_AUTOCAST_ON_CPU, reason="this torch's CPU autocast has no float16"
)
NER_OVERRIDES = {
    "train_data_path": "fixtures/ner/train.txt",
    "validation_data_path": "fixtures/ner/dev.txt",
    "test_data_path": "fixtures/ner/test.txt",
    "model.text_field_embedder.token_embedders.elmo.options_file": "fixtures/elmo/options.json",
    "model.text_field_embedder.token_embedders.elmo.weight_file": "fixtures/elmo/lm_weights.hdf5",
    "model.encoder.hidden_size": 8,
}


@pytest.mark.parametrize("config", ["ner_elmo", "ner_baseline"])
def test_a_float16_autocast_training_step_of_ner_is_finite(config):
    overrides = dict(NER_OVERRIDES)
    if config == "ner_baseline":
        overrides = {k: v for k, v in overrides.items() if ".elmo." not in k}
    config_path = f"training_configs/ner/{config}.jsonnet"
    assert_float16_autocast_step_is_finite(config_path, overrides, batch_size=8)


def test_the_bilm_runs_in_its_compute_dtype_under_autocast(elmo_options, elmo_weights, sentences):
    from allennlp.modules.elmo import batch_to_ids

    elmo = Elmo(elmo_options, elmo_weights, dropout=0.0).eval()
    ids = batch_to_ids(sentences)
    with torch.no_grad():
        expected = elmo(ids)["elmo_representations"][0]
        with torch.autocast("cpu", dtype=torch.float16):
            mixed = elmo(ids)["elmo_representations"][0]
    # The biLM's layers are float32 and equal; only the mix after them is autocast's.
    torch.testing.assert_close(mixed.float(), expected, rtol=2e-3, atol=2e-3)


def test_the_lstm_turns_autocast_off():
    lstm = ElmoBiLstm(6, 4, 8, 2, cell_clip=3.0, proj_clip=3.0)
    inputs, mask = torch.randn(2, 5, 6), torch.ones(2, 5, dtype=torch.bool)
    expected, _ = lstm(inputs, mask)
    with torch.autocast("cpu", dtype=torch.float16):
        outputs, _ = lstm(inputs, mask)
    for output, reference in zip(outputs, expected):
        assert output.dtype == torch.float32
        torch.testing.assert_close(output, reference, rtol=0, atol=0)
