// A biLM sized for a CPU, on the tokenised Wikipedia corpus of ../shared/data (38 M tokens in
// 20 xz shards, streamed): the full ELMo architecture (character CNN of 1024 filters, one
// highway layer, 2 biLSTM layers of 512 cells with 128-dimensional projections, clipping,
// residual connection) with 4096 negative samples over the 50,000 most frequent words.
// benchmarks/bilm_training_speed.py measures this model against allennlp-models'
// `language_model`.
//
//   allennlp train training_configs/bilm/bilm_wikipedia_cpu.jsonnet -s runs/bilm_wiki --include-package elmo_plugin
//
// An "epoch" here is 1000 batches (the corpus is ~23,000 batches of 64 sentences), so that
// held-out perplexity is reported, and a checkpoint kept, every 1000 batches.
local bilm = import "bilm.libsonnet";
{
  dataset_reader: bilm.sentence_reader,
  // The first 1000 held-out sentences: the full softmax over 50,000 words takes a while.
  validation_dataset_reader: { type: "bilm_corpus", max_instances: 1000 },
  train_data_path: bilm.wikipedia.train,
  validation_data_path: bilm.wikipedia.dev,
  vocabulary: { type: "from_corpus", corpus: bilm.wikipedia.train, max_vocab_size: 50000 },
  model: {
    type: "bilm",
    // The published CNN's 1024 narrowest filters.
    bilm: bilm.options(bilm.elmo_filters[0:6], 1, 512, 128),
    num_samples: 4096,
    dropout: 0.1,
  },
  data_loader: bilm.bucket_loader(64) + {
    // Stream the corpus: batches are made within chunks of this many sentences.
    max_instances_in_memory: 6400,
    batches_per_epoch: 1000,
  },
  validation_data_loader: bilm.validation_loader,
  trainer: bilm.trainer({ type: "adam", lr: 0.001 }, num_epochs=40, keep=2),
}
