"""ModelTestCase invariants of `bidaf_rc` as the SQuAD configs build it: without ELMo and with
ELMo at the input, the output and both."""

import elmo_plugin.allennlp.tasks.squad  # noqa: F401
from tests.model_invariants import UNSHUFFLED_BUCKETS, ShippedConfigInvariants
from tests.tasks.squad.squad_small_overrides import FIXTURE, SMALL
from tests.tasks.training_helpers import FIXTURE_BILM, bilm_files

ELMO = "model.elmo"

# The configs have no validation set (README: SQuAD's splits); ModelTestCase reads its batch
# from the validation path.
WITH_VALIDATION = {**SMALL, **UNSHUFFLED_BUCKETS, "validation_data_path": FIXTURE}
WITH_FIXTURE_BILM = {**WITH_VALIDATION, **bilm_files(ELMO, FIXTURE_BILM)}


class TestSquadBaselineInvariants(ShippedConfigInvariants):
    config = "squad/squad_baseline.jsonnet"
    overrides = WITH_VALIDATION
    dataset_file = FIXTURE
    # Three biases add one number to every score that a softmax then normalises: each span
    # scorer's to the logits of all passage positions, the trilinear attention's to all
    # passage-question similarities (normalised over the question, and over the passage
    # after the max). A softmax is blind to such a shift, so their gradients are exactly zero
    # (rounding alone makes them nonzero, some runs). Kept, as in AllenNLP's BiDAF, for the
    # trained archives' parameters.
    gradients_to_ignore = {
        "_span_start_predictor._module.bias",
        "_span_end_predictor._module.bias",
        "_matrix_attention._bias",
    }


# The frozen biLM's parameters do not require gradients; ModelTestCase checks that they get
# none, and that each place's layer weights (scalar mix) get one.
class TestSquadElmoInputInvariants(TestSquadBaselineInvariants):
    config = "squad/squad_elmo.jsonnet"
    overrides = WITH_FIXTURE_BILM
    elmo_modules = (ELMO,)


class TestSquadElmoOutputInvariants(TestSquadBaselineInvariants):
    config = "squad/squad_elmo_output.jsonnet"
    overrides = WITH_FIXTURE_BILM
    elmo_modules = (ELMO,)


class TestSquadElmoInputOutputInvariants(TestSquadBaselineInvariants):
    config = "squad/squad_elmo_input_output.jsonnet"
    overrides = WITH_FIXTURE_BILM
    elmo_modules = (ELMO,)
