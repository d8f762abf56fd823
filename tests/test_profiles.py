"""The two install profiles (README "Install") read each other's archives, and the
`weights_only` default of torch >= 2.6's `torch.load` breaks neither loading nor `--recover`."""

import glob
import json
import os

import numpy
import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.training.callbacks import TrainerCallback

import elmo_plugin.allennlp.tasks.ner  # noqa: F401
from tests.profile_archives import ARCHIVES, predict

# ner_elmo's ELMo token embedder, as a config path.
ELMO = "model.text_field_embedder.token_embedders.elmo"
PROFILE_ARCHIVES = sorted(glob.glob(os.path.join(ARCHIVES, "*", "model.tar.gz")))


def test_there_is_an_archive_of_each_profile():
    profiles = {os.path.basename(os.path.dirname(path)) for path in PROFILE_ARCHIVES}
    assert profiles == {"current", "allennlp-2.10"}


@pytest.mark.parametrize(
    "archive", PROFILE_ARCHIVES, ids=lambda p: os.path.basename(os.path.dirname(p))
)
def test_an_archive_of_either_profile_predicts_what_it_predicted_where_it_was_trained(archive):
    with open(os.path.join(os.path.dirname(archive), "predictions.json")) as handle:
        recorded = json.load(handle)["sentences"]
    predicted = predict(archive)
    assert [s["words"] for s in predicted] == [s["words"] for s in recorded]
    assert [s["tags"] for s in predicted] == [s["tags"] for s in recorded]
    for ours, theirs in zip(predicted, recorded):
        numpy.testing.assert_allclose(ours["logits"], theirs["logits"], rtol=1e-5, atol=1e-5)


@TrainerCallback.register("test_profiles_interrupt_after_epoch_one")
class InterruptAfterEpochOne(TrainerCallback):
    """Raises KeyboardInterrupt (what Ctrl-C raises) at the end of the first epoch, once."""

    def __init__(self, serialization_dir: str, marker: str) -> None:
        super().__init__(serialization_dir)
        self.marker = marker

    def on_epoch(self, trainer, metrics, epoch, is_primary=True, **kwargs) -> None:
        if not os.path.exists(self.marker):
            open(self.marker, "w").close()
            raise KeyboardInterrupt


def test_recover_reads_back_a_task_training_state(tmp_path):
    # Checkpoints hold the optimizer, the metric tracker and the trainer's counters: all must
    # load under torch.load's weights_only default (torch >= 2.6), or --recover fails.
    overrides = {
        "train_data_path": "fixtures/ner/train.txt",
        "validation_data_path": "fixtures/ner/dev.txt",
        "test_data_path": "fixtures/ner/test.txt",
        f"{ELMO}.options_file": "fixtures/elmo/options.json",
        f"{ELMO}.weight_file": "fixtures/elmo/lm_weights.hdf5",
        "model.encoder.hidden_size": 8,
        "data_loader.batch_sampler.batch_size": 8,
        "trainer.num_epochs": 2,
        "trainer.callbacks": [
            {
                "type": "test_profiles_interrupt_after_epoch_one",
                "marker": str(tmp_path / "interrupted"),
            }
        ],
    }
    config, run = "training_configs/ner/ner_elmo.jsonnet", str(tmp_path / "run")
    with pytest.raises(KeyboardInterrupt):
        train_model_from_file(config, run, overrides=json.dumps(overrides))
    train_model_from_file(config, run, overrides=json.dumps(overrides), recover=True)
    with open(os.path.join(run, "metrics.json")) as handle:
        metrics = json.load(handle)
    assert metrics["epoch"] == 1, metrics  # the run ended its second epoch, recovered
