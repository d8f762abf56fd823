"""Overrides that shrink the coreference configs to one quick epoch on the fixtures; none of the
sizes depends on the biLM."""

from tests import paths

FIXTURES = paths.FIXTURES / "coref"
WORD_DIM, NUM_FILTERS, HIDDEN, FEEDFORWARD, FEATURE = (
    100,
    64,
    5,
    7,
    20,
)  # the configs' word, character and feature sizes
SMALL = {
    "train_data_path": str(FIXTURES / "train_docs.txt"),
    "validation_data_path": str(FIXTURES / "dev_docs.txt"),
    "test_data_path": str(FIXTURES / "test_docs.txt"),
    "trainer.num_epochs": 1,
    # Every fixture word is kept: the configs' min_count of 2 would leave most unknown.
    "vocabulary.min_count.tokens": 1,
    "dataset_reader.max_tokens": 120,
    "model.context_layer.hidden_size": HIDDEN,
    "model.mention_feedforward.hidden_dims": FEEDFORWARD,
    "model.antecedent_feedforward.hidden_dims": FEEDFORWARD,
    "model.antecedent_hidden_dim": FEEDFORWARD,
}
