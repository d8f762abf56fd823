"""ModelTestCase invariants of `esim_nli` as the SNLI configs build it: without ELMo and with
ELMo at the input, the output and both."""

import elmo_plugin.allennlp.tasks.snli  # noqa: F401
from tests.model_invariants import UNSHUFFLED_BUCKETS, ShippedConfigInvariants
from tests.tasks.snli.snli_small_overrides import FIXTURES, SMALL
from tests.tasks.training_helpers import FIXTURE_BILM, bilm_files

ELMO = "model.elmo"

WITH_FIXTURE_BILM = {**SMALL, **UNSHUFFLED_BUCKETS, **bilm_files(ELMO, FIXTURE_BILM)}


class TestSnliBaselineInvariants(ShippedConfigInvariants):
    config = "snli/snli_baseline.jsonnet"
    overrides = {**SMALL, **UNSHUFFLED_BUCKETS}
    dataset_file = str(FIXTURES / "dev.jsonl")


# The frozen biLM's parameters do not require gradients; ModelTestCase checks that they get
# none, and that each place's layer weights (scalar mix) get one.
class TestSnliElmoInputInvariants(TestSnliBaselineInvariants):
    config = "snli/snli_elmo_input.jsonnet"
    overrides = WITH_FIXTURE_BILM
    elmo_modules = (ELMO,)


class TestSnliElmoOutputInvariants(TestSnliBaselineInvariants):
    config = "snli/snli_elmo_output.jsonnet"
    overrides = WITH_FIXTURE_BILM
    elmo_modules = (ELMO,)


class TestSnliElmoInputOutputInvariants(TestSnliBaselineInvariants):
    config = "snli/snli_elmo_input_output.jsonnet"
    overrides = WITH_FIXTURE_BILM
    elmo_modules = (ELMO,)
