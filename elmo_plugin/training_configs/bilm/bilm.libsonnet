// Blocks shared by the bilm pretraining configs.
local data = import "../common/data.libsonnet";
{
  // The tokenised Wikipedia corpus of ../shared/data (20 xz shards, 38 M tokens).
  wikipedia: data.lm,

  // bilm-tf options (what `options.json` holds) for a biLM of the given size.
  options(filters, n_highway, cells, projection, n_characters=262):: {
    char_cnn: {
      embedding: { dim: 16 },
      filters: filters,
      n_highway: n_highway,
      n_characters: n_characters,
      activation: "relu",
      max_characters_per_token: 50,
    },
    lstm: {
      dim: cells,
      projection_dim: projection,
      n_layers: 2,
      cell_clip: 3,
      proj_clip: 3,
      use_skip_connections: true,
    },
  },

  // The CNN of the published ELMo models: 2048 filters.
  elmo_filters: [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]],

  // The paper's models. bilm-tf trains with 261 characters; `elmo-export` writes the 262 its
  // inference code wants.
  elmo_small: self.options(self.elmo_filters, 1, 1024, 128, 261),
  elmo_original: self.options(self.elmo_filters, 2, 4096, 512, 261),

  // bilm-tf's training recipe: the packed stream of 128 lanes x 20 tokens, 8192 negative
  // samples, dropout 0.1, Adagrad 0.2 (accumulators starting at 1), gradient norm 10.
  packed_reader(lanes=128, window=20):: {
    type: "bilm_corpus",
    mode: "packed",
    num_lanes: lanes,
    window_length: window,
  },
  // Lanes continue from batch to batch: one batch per window, in order, never shuffled.
  packed_loader(lanes=128):: {
    batch_size: lanes,
    shuffle: false,
    max_instances_in_memory: lanes * 50,
  },
  paper_trainer(num_epochs=10, cuda_device=0):: {
    optimizer: { type: "adagrad", lr: 0.2, initial_accumulator_value: 1.0 },
    grad_norm: 10.0,
    num_epochs: num_epochs,
    cuda_device: cuda_device,
    validation_metric: "-perplexity",
    // Mid-epoch checkpoints, for `--recover` (by batches: distributed training cannot
    // checkpoint by seconds).
    // Written atomically; `exact_resume` makes `--recover` replay the same random draws.
    checkpointer: { type: "atomic", save_every_num_batches: 2000, keep_most_recent_by_count: 3 },
    callbacks: [{ type: "exact_resume" }],
  },
}
