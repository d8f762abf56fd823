"""Overrides that shrink the SQuAD configs to one quick epoch on the fixture; none of the
sizes depends on the biLM."""

from tests.paths import FIXTURES

FIXTURE = str(FIXTURES / "squad" / "tiny_train.json")
EMBEDDERS = "model.text_field_embedder.token_embedders"
WORD_DIM, NUM_FILTERS, HIDDEN = 8, 8, 6
SMALL = {
    "train_data_path": FIXTURE,
    "test_data_path": FIXTURE,
    f"{EMBEDDERS}.tokens.embedding_dim": WORD_DIM,
    f"{EMBEDDERS}.token_characters.embedding.embedding_dim": 4,
    f"{EMBEDDERS}.token_characters.encoder.embedding_dim": 4,
    f"{EMBEDDERS}.token_characters.encoder.num_filters": NUM_FILTERS,
    "model.phrase_layer.hidden_size": HIDDEN,
    "model.modeling_layer.hidden_size": HIDDEN,
    "model.span_end_encoder.hidden_size": HIDDEN,
    "data_loader.batch_sampler.batch_size": 4,
    "trainer.num_epochs": 1,
}
