"""ModelTestCase invariants of `span_ranking_coref` as the coreference configs build it: without
ELMo and with ELMo at the input."""

import elmo_plugin.allennlp.tasks.coref  # noqa: F401
from tests.model_invariants import UNSHUFFLED_BUCKETS, ShippedConfigInvariants
from tests.tasks.coref.coref_small_overrides import FIXTURES, SMALL
from tests.tasks.training_helpers import FIXTURE_BILM, bilm_files

ELMO = "model.elmo"


class TestCorefBaselineInvariants(ShippedConfigInvariants):
    config = "coref/coref_baseline.jsonnet"
    overrides = {**SMALL, **UNSHUFFLED_BUCKETS}
    # Two short documents: ModelTestCase predicts them one by one and in one padded batch.
    dataset_file = str(FIXTURES / "train_docs.txt")
    # The loss and the words are per batch or not tensors; every output tensor is compared.
    keys_to_ignore = ("words",)


# The frozen biLM's parameters do not require gradients; ModelTestCase checks that they get
# none, and that the layer weights (scalar mix) get one.
class TestCorefElmoInvariants(TestCorefBaselineInvariants):
    config = "coref/coref_elmo.jsonnet"
    overrides = {**SMALL, **UNSHUFFLED_BUCKETS, **bilm_files(ELMO, FIXTURE_BILM)}
    elmo_modules = (ELMO,)
