// Blocks shared by the bilm pretraining configs.
local data = import "../common/data.libsonnet";
local training = import "../common/optimizer.libsonnet";
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

  // The CNN of the published ELMo models: 2048 filters (smaller biLMs take its first few).
  // elmo_plugin/elmo/formats/published_sizes.py states the same for Python (a test checks they agree).
  elmo_filters: [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]],

  // The paper's models. bilm-tf trains with 261 characters; `elmo-export` writes the 262 its
  // inference code wants.
  elmo_small: self.options(self.elmo_filters, 1, 1024, 128, 261),
  elmo_original: self.options(self.elmo_filters, 2, 4096, 512, 261),

  // One sentence an instance, with its markers.
  sentence_reader: { type: "bilm_corpus", max_sentence_length: 100 },
  // Batches of sentences of similar length.
  bucket_loader(batch_size=32):: training.data_loader(batch_size) + {
    batch_sampler+: { sorting_keys: ["tokens"] },
  },
  // Validation in file order draws no random numbers (a bucket sampler would, even
  // unshuffled), so that `--recover`, which replays the data of the epochs it skips but not
  // their validation, gives the training batches an uninterrupted run would have had.
  validation_loader: { batch_size: 64 },
  // Training judged by held-out perplexity, with gradient norms clipped at 10 (bilm-tf's),
  // checkpoints written atomically and `--recover` exact.
  trainer(optimizer, num_epochs, keep=1):: training.resumable(keep) + {
    optimizer: optimizer,
    grad_norm: 10.0,
    num_epochs: num_epochs,
    validation_metric: "-perplexity",
  },

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
  // The paper's model options: Adagrad updates only the softmax rows a step touches, exactly
  // the dense update without a dense gradient of the whole softmax; on CUDA the LSTM's step
  // loops replay as CUDA graphs ("auto": where the input is on CUDA, none on the CPU;
  // docs/performance.md, "The GPU's path, measured").
  paper_model:: {
    num_samples: 8192,
    dropout: 0.1,
    sparse_softmax_gradient: true,
    execution: { cuda_graphs: "auto" },
  },
  // Adagrad 0.2, accumulators starting at 1. The softmax weight (the one sparse gradient) has a
  // parameter group of its own: torch's Adagrad steps a group with a sparse gradient one
  // tensor at a time, and the other group then takes the multi-tensor path on a GPU (a few
  // launches for all 18 dense parameters instead of about 6 each). The update is the same.
  paper_optimizer:: {
    type: "adagrad",
    lr: 0.2,
    initial_accumulator_value: 1.0,
    parameter_groups: [[["^_softmax\\.weight$"], {}]],
  },
  paper_trainer(num_epochs=10, cuda_device=0)::
    self.trainer(self.paper_optimizer, num_epochs, 3) + {
      // Clips the sparse softmax gradient too (paper_model's), which AllenNLP's cannot on CUDA;
      // `--recover` is exact with it as with `exact_resume_gradient_descent`, its base.
      type: "sparse_gradient_descent",
      cuda_device: cuda_device,
      // Mid-epoch checkpoints, for `--recover` (by batches: distributed training cannot
      // checkpoint by seconds).
      checkpointer+: { save_every_num_batches: 2000 },
    },
}
