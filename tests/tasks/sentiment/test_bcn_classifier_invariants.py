"""ModelTestCase invariants of `bcn_classifier` as the SST configs build it: without ELMo and
with ELMo at the input and the integrator's output."""

import elmo_plugin.tasks.sentiment  # noqa: F401
from tests.model_invariants import UNSHUFFLED_BUCKETS, ShippedConfigInvariants
from tests.tasks.sentiment.sst_small_overrides import FIXTURES, SMALL
from tests.tasks.training_helpers import FIXTURE_BILM, bilm_files

ELMO = "model.elmo"


class TestSstBaselineInvariants(ShippedConfigInvariants):
    config = "sentiment/sst_baseline.jsonnet"
    overrides = {**SMALL, **UNSHUFFLED_BUCKETS}
    dataset_file = str(FIXTURES / "dev.txt")


# The frozen biLM's parameters do not require gradients; ModelTestCase checks that they get
# none, and that each place's layer weights (scalar mix) get one.
class TestSstElmoInvariants(TestSstBaselineInvariants):
    config = "sentiment/sst_elmo.jsonnet"
    overrides = {**SMALL, **UNSHUFFLED_BUCKETS, **bilm_files(ELMO, FIXTURE_BILM)}
    elmo_modules = (ELMO,)
