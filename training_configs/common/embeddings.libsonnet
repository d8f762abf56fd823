// Baseline word and character embeddings (no pretrained vectors are available offline,
// so word embeddings are trained from scratch).
{
  indexers: {
    tokens: { type: "single_id", lowercase_tokens: true },
    token_characters: { type: "characters", min_padding_length: 5 },
  },

  word_embedder(dim=100):: { type: "embedding", embedding_dim: dim, trainable: true },

  char_embedder(embedding_dim=16, num_filters=64, ngram_filter_sizes=[3]):: {
    type: "character_encoding",
    // Sized by the characters seen, not by the words (Embedding's default namespace).
    embedding: { embedding_dim: embedding_dim, vocab_namespace: "token_characters" },
    encoder: {
      type: "cnn",
      embedding_dim: embedding_dim,
      num_filters: num_filters,
      ngram_filter_sizes: ngram_filter_sizes,
      conv_layer_activation: "relu",
    },
  },
}
