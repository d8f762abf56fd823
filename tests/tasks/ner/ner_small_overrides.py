"""Overrides that shrink the NER configs to one quick epoch on the fixtures."""

from typing import Any, Dict

WORD_DIM, NUM_FILTERS = 8, 8
SMALL: Dict[str, Any] = {
    "train_data_path": "fixtures/ner/train.txt",
    "validation_data_path": "fixtures/ner/dev.txt",
    "test_data_path": "fixtures/ner/test.txt",
    "trainer.num_epochs": 1,
    "data_loader.batch_sampler.batch_size": 8,
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": WORD_DIM,
    "model.text_field_embedder.token_embedders.token_characters.encoder.num_filters": NUM_FILTERS,
    "model.encoder.hidden_size": 8,
}
