// Does a larger lane count reach the held-out perplexity of bilm-tf's 128 lanes for the same
// number of training tokens? bilm_wikipedia_cpu.jsonnet's model trained with the paper's recipe
// (packed windows of 20 tokens, Adagrad, gradient norm 10) at LANES lanes and learning rate LR
// for BATCHES batches (so LANES x 20 x BATCHES tokens), in bfloat16; run by
// experiments/lane_count.sh, which sets those environment variables (AllenNLP passes them to
// jsonnet as external variables).
local bilm = import "../training_configs/bilm/bilm.libsonnet";
local cpu = import "../training_configs/bilm/bilm_wikipedia_cpu.jsonnet";
local lanes = std.parseInt(std.extVar("LANES"));
local shard = "../shared/data/lm_wikipedia_en_2015/tokenized/train/shard-00.txt.xz";
cpu + {
  dataset_reader: bilm.packed_reader(lanes),
  train_data_path: shard,
  vocabulary+: { corpus: shard },
  model+: { compute_dtype: "bfloat16", sparse_softmax_gradient: true },
  data_loader: bilm.packed_loader(lanes) + { batches_per_epoch: std.parseInt(std.extVar("BATCHES")) },
  trainer+: {
    type: "sparse_gradient_descent",
    optimizer: { type: "adagrad", lr: std.parseJson(std.extVar("LR")), initial_accumulator_value: 1.0 },
    grad_norm: 10.0,
    num_epochs: 1,
    checkpointer+: { keep_most_recent_by_count: 1 },
  },
}
