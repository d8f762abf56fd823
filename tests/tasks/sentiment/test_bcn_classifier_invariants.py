"""ModelTestCase invariants of `bcn_classifier` as the SST configs build it: without ELMo and
with ELMo at the input, and at the input and the integrator's output."""

import elmo_plugin.allennlp.tasks.sentiment  # noqa: F401
from tests.model_invariants import UNSHUFFLED_BUCKETS, ShippedConfigInvariants
from tests.tasks.sentiment.sst_small_overrides import FIXTURES, SMALL
from tests.tasks.training_helpers import FIXTURE_BILM, bilm_files

ELMO = "model.elmo"


# The configs train on phrases; the checked batch is read as sentences: the shortest bucket of
# phrases is one word each, through which the recurrent and attention weights get no
# gradient (one step from a zero state, a softmax over one word).
SENTENCES = {"dataset_reader.use_subtrees": False}


# The self-attentive pooling's bias shifts every attention logit alike, which the softmax
# cancels: its true gradient is zero, and whether rounding leaves it exactly zero or about 1e-9
# depends on the CPU's kernels (exactly zero on an AVX2-only Zen 3, not on a Zen 5).
SHIFT_INVARIANT = {"_self_attentive_pooling_projection.bias"}


class TestSstBaselineInvariants(ShippedConfigInvariants):
    config = "sentiment/sst_baseline.jsonnet"
    overrides = {**SMALL, **UNSHUFFLED_BUCKETS, **SENTENCES}
    dataset_file = str(FIXTURES / "dev.txt")
    gradients_to_ignore = SHIFT_INVARIANT


# The frozen biLM's parameters do not require gradients; ModelTestCase checks that they get
# none, and that each place's layer weights (scalar mix) get one.
class TestSstElmoInvariants(TestSstBaselineInvariants):
    config = "sentiment/sst_elmo.jsonnet"
    overrides = {**SMALL, **UNSHUFFLED_BUCKETS, **SENTENCES, **bilm_files(ELMO, FIXTURE_BILM)}
    elmo_modules = (ELMO,)


class TestSstElmoInputOutputInvariants(TestSstElmoInvariants):
    config = "sentiment/sst_elmo_input_output.jsonnet"
