"""
`ner_elmo.jsonnet` with an ELMoForManyLangs model chosen by the config alone
(`elmo_settings:: elmo.efml(folder)`, which sets the embedder's biLM and its indexer) trains
for an epoch on the fixtures, the biLM frozen (behind the activation cache) or fine-tuned, and
its archive loads with the trained weights; with the model's folder gone, loading the archive
says which folder and what to do, and the overrides it suggests load it from the new place.
"""

import json
import math
import shutil
from pathlib import Path
from typing import Any, cast

import pytest
import torch
from allennlp.models.archival import load_archive

import elmo_plugin.allennlp.tasks.ner  # noqa: F401
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml import EfmlBiLm, load_efml_bilm
from elmo_plugin.elmo.formats.efml.token_encoder import EfmlTokenEncoder
from tests.paths import FIXTURES
from tests.tasks.ner.ner_small_overrides import NUM_FILTERS, SMALL, WORD_DIM
from tests.tasks.training_helpers import train_config

FIXTURE_MODEL = FIXTURES / "efml" / "model"
CONFIG = """
local elmo = import "elmo_plugin/training_configs/common/elmo.libsonnet";
(import "elmo_plugin/training_configs/ner/ner_elmo.jsonnet") + {
  elmo_settings:: elmo.efml(%s),
  elmo_requires_grad:: %s,
}
"""


@pytest.mark.parametrize("requires_grad", [False, True])
def test_the_ner_config_trains_with_an_efml_model_frozen_or_fine_tuned(tmp_path, requires_grad):
    model_dir = tmp_path / "efml_model"  # a copy, moved away after training
    shutil.copytree(FIXTURE_MODEL, model_dir)
    config = tmp_path / "ner_efml.jsonnet"
    config.write_text(CONFIG % (json.dumps(str(model_dir)), json.dumps(requires_grad)))
    trained_model, metrics = train_config(config, tmp_path / "run", SMALL)
    model: Any = trained_model  # its submodules, as the config built them
    assert math.isfinite(metrics["training_loss"])
    assert 0.0 <= metrics["test_f1-measure-overall"] <= 1.0
    elmo = model.text_field_embedder.token_embedder_elmo.elmo
    assert isinstance(elmo.bilm, EfmlBiLm)
    assert model.encoder.get_input_dim() == WORD_DIM + NUM_FILTERS + elmo.get_output_dim()
    written = json.loads((tmp_path / "run" / "config.json").read_text())
    indexer = written["dataset_reader"]["token_indexers"]["elmo"]
    assert indexer == {"type": "elmo_efml_characters", "model": str(model_dir)}
    embedder = written["model"]["text_field_embedder"]["token_embedders"]["elmo"]
    assert ("activation_cache" in embedder) != requires_grad  # the cache needs it frozen
    trained = cast(EfmlTokenEncoder, elmo.bilm.character_encoder).word_embedding
    as_loaded = cast(EfmlTokenEncoder, load_efml_bilm(str(model_dir)).character_encoder)
    assert trained.requires_grad == requires_grad
    assert torch.equal(trained.detach(), as_loaded.word_embedding) != requires_grad
    # The archive brings the trained biLM's weights, fine-tuned ones too, over the folder's.
    archive = str(tmp_path / "run" / "model.tar.gz")
    archived: Any = load_archive(archive).model
    reloaded = archived.text_field_embedder.token_embedder_elmo.elmo.bilm
    assert torch.equal(reloaded.character_encoder.word_embedding, trained.detach())
    assert_a_gone_model_is_named_with_what_to_do(archive, model_dir, trained.detach())


def assert_a_gone_model_is_named_with_what_to_do(
    archive: str, model: Path, word_embedding: torch.Tensor
) -> None:
    moved = model.parent / "moved_model"
    model.rename(moved)
    indexer_model = "dataset_reader.token_indexers.elmo.model"
    options_file = "model.text_field_embedder.token_embedders.elmo.options_file"
    # The reader is built first: its indexer names the folder; then the biLM does.
    for overrides, who in [({}, "elmo_efml_characters"), ({indexer_model: str(moved)}, "biLM")]:
        with pytest.raises(ConfigurationError) as error:
            load_archive(archive, overrides=overrides)
        message = str(error.value)
        assert f"{who}" in message and f"{str(model)!r}: the ELMoForManyLangs model" in message
        assert "Put the folder back there, or name where it is now" in message
    # Named in its new place, as the error says, the model loads with its trained weights.
    relocated: Any = load_archive(
        archive, overrides={indexer_model: str(moved), options_file: str(moved)}
    ).model
    bilm = relocated.text_field_embedder.token_embedder_elmo.elmo.bilm
    assert torch.equal(bilm.character_encoder.word_embedding, word_embedding)
