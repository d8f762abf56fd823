"""ModelTestCase invariants of `deep_srl` as the SRL configs build it, in both label modes."""

import elmo_plugin.allennlp.tasks.srl  # noqa: F401
from tests.model_invariants import UNSHUFFLED_BUCKETS, ShippedConfigInvariants
from tests.tasks.srl.srl_small_overrides import NUM_FILTERS, PREDICATE_DIM, SMALL, TRAIN, WORD_DIM
from tests.tasks.training_helpers import FIXTURE_BILM, bilm_files

ELMO = "model.text_field_embedder.token_embedders.elmo"
# The slice's first predicates: enough lengths and roles, and a few seconds a test.
FEW = {"dataset_reader.max_instances": 16}
HEAD_MODE = {"dataset_reader.label_mode": "head", "model.label_mode": "head"}


class TestSrlBaselineInvariants(ShippedConfigInvariants):
    config = "srl/srl_baseline.jsonnet"
    # The baseline config states its encoder's input size, at the full sizes.
    overrides = {
        **SMALL,
        **FEW,
        **UNSHUFFLED_BUCKETS,
        "model.encoder.input_size": WORD_DIM + NUM_FILTERS + PREDICATE_DIM,
    }
    dataset_file = TRAIN


class TestSrlBaselineHeadModeInvariants(TestSrlBaselineInvariants):
    # Head mode decodes by argmax, span mode by constrained Viterbi.
    overrides = {**TestSrlBaselineInvariants.overrides, **HEAD_MODE}


class TestSrlElmoInvariants(TestSrlBaselineInvariants):
    # The frozen biLM's parameters do not require gradients; ModelTestCase checks that they
    # get none, and that the layer weights (scalar mix) get one.
    config = "srl/srl_elmo.jsonnet"
    overrides = {**SMALL, **FEW, **UNSHUFFLED_BUCKETS, **bilm_files(ELMO, FIXTURE_BILM)}
    elmo_modules = (ELMO,)
