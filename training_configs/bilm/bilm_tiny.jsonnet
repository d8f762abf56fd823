// A tiny biLM that trains in a couple of minutes on two CPU cores, on the small Wikipedia
// sample installed with the package (sample/, named by elmo_plugin://, so that the config runs
// from a pip install in any directory as from the clone). The whole pretraining recipe at toy size:
//
//   allennlp train training_configs/bilm/bilm_tiny.jsonnet -s runs/bilm_tiny --include-package elmo_plugin
//   allennlp evaluate runs/bilm_tiny/model.tar.gz training_configs/bilm/sample/wiki_valid.txt --include-package elmo_plugin
//   allennlp elmo-export runs/bilm_tiny/model.tar.gz runs/bilm_tiny/elmo --include-softmax
local bilm = import "bilm.libsonnet";
local train = "elmo_plugin://training_configs/bilm/sample/wiki_train.txt.xz";
local valid = "elmo_plugin://training_configs/bilm/sample/wiki_valid.txt";
{
  dataset_reader: bilm.sentence_reader,
  train_data_path: train,
  validation_data_path: valid,
  vocabulary: { type: "from_corpus", corpus: train, min_count: 2 },
  model: {
    type: "bilm",
    // The published CNN's 256 narrowest filters, 2 layers of 256 cells, 64-dim projections.
    bilm: bilm.options(bilm.elmo_filters[0:4], 1, 256, 64),
    num_samples: 1024,
    dropout: 0.1,
  },
  data_loader: bilm.bucket_loader(32),
  validation_data_loader: bilm.validation_loader,
  trainer: bilm.trainer({ type: "adam", lr: 0.003 }, num_epochs=2),
}
