// SQuAD v1.1: BiDAF with ELMo at the output only (concatenated to the attention-flow output G).
//   allennlp train training_configs/squad/squad_elmo_output.jsonnet -s /tmp/squad_elmo_output \
//     --include-package elmo_plugin
// Data paths, sizes and the biLM are explained in bidaf.libsonnet; e.g. another biLM (its files
// are enough, whatever its output size):
//   -o '{"model.elmo.options_file": "/m/options.json", "model.elmo.weight_file": "/m/weights.hdf5"}'
(import "bidaf.libsonnet") + { use_output_elmo:: true }
