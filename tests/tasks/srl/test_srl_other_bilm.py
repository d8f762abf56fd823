"""
Switching `srl_elmo.jsonnet` to a biLM of another output size takes an override of the
ELMo files only: the model sizes the encoder input from the embedders and the predicate
embedding.
"""

import math

from allennlp.common.util import import_module_and_submodules
from allennlp.data import Vocabulary

from tests.paths import TRAINING_CONFIGS
from tests.tasks.srl.srl_small_overrides import NUM_FILTERS, PREDICATE_DIM, SMALL, WORD_DIM
from tests.tasks.training_helpers import assert_input_size_must_match

CONFIGS = TRAINING_CONFIGS / "srl"
ELMO = "model.text_field_embedder.token_embedders.elmo"

import_module_and_submodules("elmo_plugin")


def test_elmo_config_trains_with_another_bilm_from_the_elmo_files_alone(
    train_with_other_size_bilm, other_bilm_output_dim
):
    model, metrics = train_with_other_size_bilm(CONFIGS / "srl_elmo.jsonnet", SMALL, elmo=ELMO)
    assert math.isfinite(metrics["training_loss"]) and metrics["training_loss"] > 0
    assert 0.0 <= metrics["test_f1-measure-overall"] <= 1.0
    assert other_bilm_output_dim != 32  # the fixture biLM's, which the config was written for
    assert (
        model._encoder.get_input_dim()
        == WORD_DIM + NUM_FILTERS + other_bilm_output_dim + PREDICATE_DIM
    )


def test_an_encoder_input_size_given_in_the_config_must_match():
    vocab = Vocabulary(tokens_to_add={"span_labels": ["O", "B-V", "B-ARG0", "I-ARG0"]})
    right = WORD_DIM + NUM_FILTERS + PREDICATE_DIM
    assert_input_size_must_match(
        CONFIGS / "srl_baseline.jsonnet", SMALL, vocab, "encoder", "input_size", right
    )
