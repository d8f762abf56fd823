"""A float16 autocast training step of both coreference configs is finite (the character CNN's
float16 overflow that `embed_in_float32` guards against; see tests/tasks/test_amp.py)."""

import pytest

import elmo_plugin.allennlp.tasks.coref  # noqa: F401
from tests.tasks.coref.coref_small_overrides import SMALL
from tests.tasks.training_helpers import (
    FIXTURE_BILM,
    FLOAT16_AUTOCAST_ON_CPU,
    assert_float16_autocast_step_is_finite,
    bilm_files,
)

pytestmark = pytest.mark.skipif(
    not FLOAT16_AUTOCAST_ON_CPU, reason="this torch's CPU autocast has no float16"
)


@pytest.mark.parametrize("config", ["coref_baseline", "coref_elmo"])
def test_a_float16_autocast_training_step_is_finite(config):
    overrides = {
        **SMALL,
        **(bilm_files("model.elmo", FIXTURE_BILM) if config == "coref_elmo" else {}),
    }
    path = f"training_configs/coref/{config}.jsonnet"
    assert_float16_autocast_step_is_finite(path, overrides, batch_size=2)
