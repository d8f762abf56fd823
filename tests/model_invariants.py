"""The invariants of AllenNLP's `ModelTestCase` for a model built by one of our shipped
training configs, shrunk to the fixtures by overrides: trained, saved and loaded it has the
same parameters and predictions; a gradient reaches every trainable parameter; and a batch
predicts for each instance what the instance predicts alone (padding changes nothing)."""

import json
from typing import Any, ClassVar, Dict, Optional, Set, Tuple

import pytest
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase

from tests.paths import PROJECT_ROOT, TRAINING_CONFIGS

# The shipped configs batch by length with a bucket sampler, which shuffles its batches and
# adds padding noise; ModelTestCase compares the first batch of two data loaders, so both
# must read the same instances in the same order.
UNSHUFFLED_BUCKETS = {"data_loader.batch_sampler.shuffle": False}


class ShippedConfigInvariants(ModelTestCase):
    """
    A `ModelTestCase` for `config` (relative to `training_configs/`) with
    `overrides`; `dataset_file` is the fixture whose instances are predicted one by one and in
    one batch; `elmo_modules` are the config paths of its ELMo modules. Subclasses named
    `Test...` set these and, only where an invariant does not hold for a stated reason,
    `gradients_to_ignore` or `keys_to_ignore`.
    """

    config: ClassVar[str]
    overrides: ClassVar[Dict[str, Any]]
    dataset_file: ClassVar[str]
    elmo_modules: ClassVar[Tuple[str, ...]] = ()
    gradients_to_ignore: ClassVar[Optional[Set[str]]] = None
    keys_to_ignore: ClassVar[Tuple[str, ...]] = ()

    @pytest.fixture(autouse=True)
    def _model_from_the_shipped_config(self, tmp_path, _run_from_project_root) -> None:
        self._tmp_path = tmp_path
        self._set_up_with(self.overrides)

    def _set_up_with(self, overrides: Dict[str, Any]) -> None:
        # ModelTestCase takes a file and no overrides: the config evaluated with them.
        params = Params.from_file(str(TRAINING_CONFIGS / self.config), json.dumps(overrides))
        param_file = self._tmp_path / "config.json"
        param_file.write_text(json.dumps(params.as_dict(quiet=True), indent=2))
        self.set_up_model(param_file, PROJECT_ROOT / self.dataset_file, seed=0)

    def test_trains_saves_and_loads_with_a_gradient_for_every_parameter(self):
        self.ensure_model_can_train_save_and_load(
            self.param_file, gradients_to_ignore=self.gradients_to_ignore, seed=0
        )

    def test_batch_predictions_equal_single_predictions(self):
        # The configs' activation cache would be filled by the single predictions and read
        # back by the batch: the biLM would never run on a padded batch. (The cache returns
        # what the biLM computes: tests/elmo/test_elmo_token_embedder.py.)
        uncached = {f"{elmo}.activation_cache": None for elmo in self.elmo_modules}
        self._set_up_with({**self.overrides, **uncached})
        self.ensure_batch_predictions_are_consistent(self.keys_to_ignore)
