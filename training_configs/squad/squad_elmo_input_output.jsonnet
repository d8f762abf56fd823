// SQuAD v1.1: BiDAF with ELMo at both input and output (one biLM run, two learned layer mixes; the paper's Table 3).
//   allennlp train training_configs/squad/squad_elmo_input_output.jsonnet -s /tmp/squad_elmo_input_output \
//     --include-package elmo_plugin
// Data paths, sizes and the biLM are explained in bidaf.libsonnet; e.g. another biLM (its files
// are enough, whatever its output size):
//   -o '{"model.elmo.options_file": "/m/options.json", "model.elmo.weight_file": "/m/weights.hdf5"}'
(import "bidaf.libsonnet") + { use_input_elmo:: true, use_output_elmo:: true }
