"""Overrides that shrink the SNLI configs to one quick epoch on the fixtures; none of the
sizes depends on the biLM."""

from tests import paths

FIXTURES = paths.FIXTURES / "snli"
WORD_DIM, NUM_FILTERS, HIDDEN = 100, 64, 8  # the configs' word and character sizes
SMALL = {
    "train_data_path": str(FIXTURES / "train.jsonl"),
    "validation_data_path": str(FIXTURES / "dev.jsonl"),
    "test_data_path": str(FIXTURES / "test.jsonl"),
    "trainer.num_epochs": 1,
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": WORD_DIM,
    "model.encoder.hidden_size": HIDDEN,
    "model.projection_feedforward.hidden_dims": HIDDEN,
    "model.inference_encoder.hidden_size": HIDDEN,
    "model.output_feedforward.hidden_dims": HIDDEN,
}
