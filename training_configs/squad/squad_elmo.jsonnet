// SQuAD v1.1: BiDAF with ELMo at the input (concatenated to the word and character embeddings).
//   allennlp train training_configs/squad/squad_elmo.jsonnet -s /tmp/squad_elmo \
//     --include-package elmo_plugin
// Data paths, sizes and the biLM are explained in bidaf.libsonnet; e.g. another biLM (its files
// are enough, whatever its output size):
//   -o '{"model.elmo.options_file": "/m/options.json", "model.elmo.weight_file": "/m/weights.hdf5"}'
(import "bidaf.libsonnet") + { use_input_elmo:: true }
