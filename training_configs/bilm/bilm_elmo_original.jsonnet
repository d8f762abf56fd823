// The paper's biLM (Peters et al. 2018; bilm-tf's elmo_2x4096_512_2048cnn_2xhighway): two
// biLSTM layers of 4096 cells with 512-dimensional projections over a 2048-filter character
// CNN with two highway layers, trained as bilm-tf trains it. For a GPU:
//
//   allennlp train training_configs/bilm/bilm_elmo_original.jsonnet -s runs/elmo_original --include-package elmo_plugin
//   allennlp elmo-export runs/elmo_original/model.tar.gz runs/elmo_original/elmo
//
// The corpus defaults to the Wikipedia slice of ../shared/data; point `train_data_path` (a
// glob of shards, .txt/.xz/.gz) and `vocabulary.corpus` at your own, e.g. the 1B Word
// Benchmark the paper used. Several GPUs: bilm_elmo_original_multigpu.jsonnet.
local bilm = import "bilm.libsonnet";
{
  dataset_reader: bilm.packed_reader(),
  train_data_path: bilm.wikipedia.train,
  validation_data_path: bilm.wikipedia.dev,
  // Words seen at least 3 times, most frequent first (what the sampled softmax assumes).
  vocabulary: { type: "from_corpus", corpus: bilm.wikipedia.train, min_count: 3 },
  model: bilm.paper_model + { type: "bilm", bilm: bilm.elmo_original },
  data_loader: bilm.packed_loader(),
  trainer: bilm.paper_trainer(),
}
