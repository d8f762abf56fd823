"""
Switching `ner_elmo.jsonnet` to a biLM of another output size takes an override of the
ELMo files only: the model sizes the encoder input from the embedders.
"""

import math

import elmo_plugin.allennlp.tasks.ner  # noqa: F401
from tests.paths import TRAINING_CONFIGS
from tests.tasks.ner.ner_small_overrides import NUM_FILTERS, SMALL, WORD_DIM

ELMO = "model.text_field_embedder.token_embedders.elmo"


def test_elmo_config_trains_with_another_bilm_from_the_elmo_files_alone(
    train_with_other_size_bilm, other_bilm_output_dim
):
    model, metrics = train_with_other_size_bilm(
        TRAINING_CONFIGS / "ner/ner_elmo.jsonnet", SMALL, elmo=ELMO
    )
    assert math.isfinite(metrics["training_loss"])
    assert 0.0 <= metrics["test_f1-measure-overall"] <= 1.0
    assert other_bilm_output_dim != 32  # the fixture biLM's, which the config was written for
    assert model.encoder.get_input_dim() == WORD_DIM + NUM_FILTERS + other_bilm_output_dim
