// Domain adaptation (Peters et al. 2018, section 5): continue training a biLM on text of the
// target domain before using it as ELMo. Here: the shipped biLM (elmo_plugin/pretrained/, exported with
// its softmax), trained one more epoch on image captions (SNLI premises, bundled).
//
//   allennlp train training_configs/bilm/bilm_finetune.jsonnet -s runs/bilm_captions --include-package elmo_plugin
//   allennlp elmo-export runs/bilm_captions/model.tar.gz runs/bilm_captions/elmo
//
// From your own export (`allennlp elmo-export ... --include-softmax`): override
// `vocabulary.vocab_file`, `model.options_file`, `model.weight_file` and `model.softmax_file`.
// From a published biLM (options + weights only, no softmax): set `model.options_file` and
// `model.weight_file`, drop `model.softmax_file`, and count the vocabulary from the domain
// corpus instead: "vocabulary": {"type": "from_corpus", "corpus": <domain corpus>}.
local bilm = import "bilm.libsonnet";
local export = "elmo_plugin://pretrained/elmo_wikipedia_512x128";
local train = "fixtures/lm/captions_train.txt";
local valid = "fixtures/lm/captions_valid.txt";
{
  dataset_reader: bilm.sentence_reader,
  train_data_path: train,
  validation_data_path: valid,
  // The export's vocabulary, so that every softmax row is reused.
  vocabulary: { type: "from_corpus", vocab_file: export + "/vocab.txt" },
  model: {
    type: "bilm",
    options_file: export + "/options.json",
    weight_file: export + "/weights.hdf5",
    softmax_file: export + "/softmax.hdf5",
    num_samples: 1024,
    dropout: 0.1,
  },
  data_loader: bilm.bucket_loader(32),
  validation_data_loader: bilm.validation_loader,
  trainer: bilm.trainer({ type: "adam", lr: 0.001 }, num_epochs=1),
}
