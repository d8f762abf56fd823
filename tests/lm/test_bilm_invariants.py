"""ModelTestCase invariants of the `bilm` language model as its configs build it: trained from
scratch (bilm_tiny.jsonnet, shrunk) and continued from a published biLM (bilm_finetune.jsonnet
from the fixture biLM)."""

import pytest
import torch
from allennlp.data import Batch

import elmo_plugin.allennlp.lm  # noqa: F401
from tests.lm.conftest import TINY_BILM, one_file_corpus
from tests.model_invariants import UNSHUFFLED_BUCKETS, ShippedConfigInvariants
from tests.tasks.training_helpers import FIXTURE_BILM

SENTENCES = "fixtures/lm/sentences.txt"
# Fewer negative samples than words, so that training (and the gradient check, which runs in
# training mode) takes the sampled softmax's path.
NUM_SAMPLES = 20
PER_DIRECTION_LOSSES = ("forward_loss", "backward_loss")


class TestBilmFromScratchInvariants(ShippedConfigInvariants):
    config = "bilm/bilm_tiny.jsonnet"
    overrides = {
        **one_file_corpus(SENTENCES),
        **UNSHUFFLED_BUCKETS,
        "model.bilm": TINY_BILM,
        "model.num_samples": NUM_SAMPLES,
        "trainer.num_epochs": 1,
    }
    dataset_file = SENTENCES

    def test_batch_predictions_equal_single_predictions(self):
        """
        ModelTestCase's check compares outputs per instance; the LM's outputs are per batch
        (mean losses over its targets, their number), so the same invariant in their terms:
        in evaluation (the exact softmax) a batch's mean loss of each direction is the mean of
        its sentences' alone, weighted by their targets, and its targets are theirs.
        """
        self.model.eval()
        with torch.no_grad():
            alone = [self.model(**Batch([one]).as_tensor_dict()) for one in self.instances]
            together = self.model(**self.dataset.as_tensor_dict())
        counts = torch.stack([output["num_targets"] for output in alone])
        assert int(together["num_targets"]) == int(counts.sum())
        for key in PER_DIRECTION_LOSSES:
            losses = torch.stack([output[key] for output in alone])
            weighted = float((losses * counts).sum() / counts.sum())
            assert float(together[key]) == pytest.approx(weighted, rel=1e-5), key


class TestBilmFinetuneInvariants(TestBilmFromScratchInvariants):
    # From the fixture biLM (published format: options and weights, no softmax), with the
    # vocabulary counted from the corpus; every biLM parameter is trained here.
    config = "bilm/bilm_finetune.jsonnet"
    overrides = {
        "train_data_path": SENTENCES,
        "validation_data_path": SENTENCES,
        **UNSHUFFLED_BUCKETS,
        "vocabulary": {"type": "from_corpus", "corpus": SENTENCES, "min_count": 1},
        "model.options_file": FIXTURE_BILM[0],
        "model.weight_file": FIXTURE_BILM[1],
        "model.softmax_file": None,
        "model.num_samples": NUM_SAMPLES,
    }
