"""Overrides that shrink the SST configs to one quick epoch on the fixtures; none of the
sizes depends on the biLM."""

from tests import paths

FIXTURES = paths.FIXTURES / "sst"
WORD_DIM, NUM_FILTERS, PRE_ENCODE, HIDDEN = 100, 64, 6, 5  # the configs' word and character sizes
SMALL = {
    "train_data_path": str(FIXTURES / "train.txt"),
    "validation_data_path": str(FIXTURES / "dev.txt"),
    "test_data_path": str(FIXTURES / "test.txt"),
    "trainer.num_epochs": 1,
    # Every fixture word is kept: the configs' min_count of 2 would leave most unknown.
    "vocabulary.min_count.tokens": 1,
    "model.pre_encode_feedforward.hidden_dims": [PRE_ENCODE],
    "model.encoder.hidden_size": HIDDEN,
    "model.integrator.hidden_size": HIDDEN,
    "model.output_layer.output_dims": [8, 4],
}
