"""ModelTestCase invariants of `bilstm_crf_tagger` as the NER configs build it."""

import elmo_plugin.allennlp.tasks.ner  # noqa: F401
from tests.model_invariants import UNSHUFFLED_BUCKETS, ShippedConfigInvariants
from tests.tasks.ner.ner_small_overrides import NUM_FILTERS, SMALL, WORD_DIM
from tests.tasks.training_helpers import FIXTURE_BILM, bilm_files

ELMO = "model.text_field_embedder.token_embedders.elmo"


class TestNerBaselineInvariants(ShippedConfigInvariants):
    config = "ner/ner_baseline.jsonnet"
    # The baseline config states its encoder's input size, at the full sizes.
    overrides = {**SMALL, **UNSHUFFLED_BUCKETS, "model.encoder.input_size": WORD_DIM + NUM_FILTERS}
    dataset_file = "fixtures/ner/test.txt"


class TestNerElmoInvariants(TestNerBaselineInvariants):
    # The frozen biLM's parameters do not require gradients; ModelTestCase checks that they
    # get none, and that the layer weights (scalar mix) get one.
    config = "ner/ner_elmo.jsonnet"
    overrides = {**SMALL, **UNSHUFFLED_BUCKETS, **bilm_files(ELMO, FIXTURE_BILM)}
    elmo_modules = (ELMO,)
