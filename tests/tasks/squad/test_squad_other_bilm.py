"""
Switching a SQuAD config to a biLM of another output size takes an override of the `elmo`
module's files only: the model sizes `phrase_layer` and `modeling_layer` from the embedders
and the ELMo module.
"""

import math

import pytest
from allennlp.data import Vocabulary

import elmo_plugin.allennlp.tasks.squad  # noqa: F401
from tests.paths import TRAINING_CONFIGS
from tests.tasks.squad.squad_small_overrides import HIDDEN, NUM_FILTERS, SMALL, WORD_DIM
from tests.tasks.training_helpers import FIXTURE_BILM, assert_input_size_must_match, bilm_files

CONFIG = TRAINING_CONFIGS / "squad" / "squad_elmo_input_output.jsonnet"
# The fixture biLM (output size 32), whatever biLM the configs default to.
SMALL_WITH_FIXTURE_BILM = {**SMALL, **bilm_files("model.elmo", FIXTURE_BILM)}


def test_elmo_config_trains_with_another_bilm_from_the_elmo_files_alone(
    train_with_other_size_bilm, other_bilm_output_dim
):
    model, metrics = train_with_other_size_bilm(CONFIG, SMALL_WITH_FIXTURE_BILM, elmo="model.elmo")
    assert math.isfinite(metrics["training_loss"]) and metrics["training_loss"] > 0
    assert 0.0 <= metrics["test_f1"] <= 1.0
    assert other_bilm_output_dim != 32  # the fixture biLM's, which SMALL_WITH_FIXTURE_BILM names
    assert model._phrase_layer.get_input_dim() == WORD_DIM + NUM_FILTERS + other_bilm_output_dim
    assert model._modeling_layer.get_input_dim() == 4 * 2 * HIDDEN + other_bilm_output_dim


@pytest.mark.parametrize(
    "module, right",
    [("phrase_layer", WORD_DIM + NUM_FILTERS + 32), ("modeling_layer", 4 * 2 * HIDDEN + 32)],
)
def test_an_input_size_given_in_the_config_must_match_the_elmo_module(module, right):
    # The right sizes are those of the fixture biLM, whose output size is 32.
    assert_input_size_must_match(
        CONFIG, SMALL_WITH_FIXTURE_BILM, Vocabulary(), module, "input_size", right
    )
