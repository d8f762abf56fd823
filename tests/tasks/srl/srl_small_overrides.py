"""Overrides that shrink the SRL configs to one quick epoch on the fixture slice."""

from tests.paths import FIXTURES

TRAIN = str(FIXTURES / "srl" / "up_english_ewt_train_slice.conllu")
WORD_DIM, NUM_FILTERS, PREDICATE_DIM = 10, 8, 4
SMALL = {
    "train_data_path": TRAIN,
    "validation_data_path": TRAIN,
    "test_data_path": TRAIN,
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": WORD_DIM,
    "model.text_field_embedder.token_embedders.token_characters.encoder.num_filters": NUM_FILTERS,
    "model.predicate_embedding_dim": PREDICATE_DIM,
    "model.encoder.hidden_size": 8,
    "model.encoder.num_layers": 2,
    "trainer.num_epochs": 1,
    "data_loader.batch_sampler.batch_size": 16,
}
