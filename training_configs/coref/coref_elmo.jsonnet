// LitBank coreference with ELMo at the input of the span-ranking model's biLSTM (Peters et al.
// 2018, section 4: Lee et al. 2017's model with ELMo added to its input), run a sentence at a
// time, with dropout on ELMo and the paper's lambda * ||w||^2 on the layer weights.
//   allennlp train training_configs/coref/coref_elmo.jsonnet -s /tmp/coref_elmo \
//     --include-package elmo_plugin
// Another biLM (e.g. one exported by `allennlp elmo-export`) needs only its files:
//   -o '{"model.elmo.options_file": "/m/options.json", "model.elmo.weight_file": "/m/weights.hdf5"}'
(import "coref.libsonnet") + { use_elmo:: true }
