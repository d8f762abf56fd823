// A tiny biLM that trains in a couple of minutes on two CPU cores, on the small Wikipedia
// corpus bundled in fixtures/lm/. The whole pretraining recipe at toy size:
//
//   allennlp train elmo_plugin/training_configs/bilm/bilm_tiny.jsonnet -s runs/bilm_tiny --include-package elmo_plugin
//   allennlp evaluate runs/bilm_tiny/model.tar.gz fixtures/lm/wiki_valid.txt --include-package elmo_plugin
//   allennlp elmo-export runs/bilm_tiny/model.tar.gz runs/bilm_tiny/elmo --include-softmax
local train = "fixtures/lm/wiki_train.txt.xz";
local valid = "fixtures/lm/wiki_valid.txt";
{
  dataset_reader: { type: "bilm_corpus", max_sentence_length: 100 },
  train_data_path: train,
  validation_data_path: valid,
  vocabulary: { type: "from_corpus", corpus: train, min_count: 2 },
  model: {
    type: "bilm",
    bilm: {
      char_cnn: {
        embedding: { dim: 16 },
        filters: [[1, 32], [2, 32], [3, 64], [4, 128]],
        n_highway: 1,
        n_characters: 262,
        activation: "relu",
      },
      lstm: { dim: 256, projection_dim: 64, n_layers: 2, cell_clip: 3, proj_clip: 3, use_skip_connections: true },
    },
    num_samples: 1024,
    dropout: 0.1,
  },
  data_loader: { batch_sampler: { type: "bucket", batch_size: 32, sorting_keys: ["tokens"] } },
  // Validation in file order draws no random numbers (a bucket sampler would, even unshuffled),
  // so that `--recover`, which replays the data of the epochs it skips but not their
  // validation, gives the training batches an uninterrupted run would have had.
  validation_data_loader: { batch_size: 64 },
  trainer: {
    optimizer: { type: "adam", lr: 0.003 },
    grad_norm: 10.0,
    num_epochs: 2,
    validation_metric: "-perplexity",
    // Written atomically; `exact_resume` makes `--recover` replay the same random draws.
    checkpointer: { type: "atomic", keep_most_recent_by_count: 1 },
    callbacks: [{ type: "exact_resume" }],
  },
}
