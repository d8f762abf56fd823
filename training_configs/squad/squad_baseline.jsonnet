// SQuAD v1.1: BiDAF baseline without ELMo.
//   allennlp train training_configs/squad/squad_baseline.jsonnet -s /tmp/squad_baseline \
//     --include-package elmo_plugin
// Data paths and sizes are explained in bidaf.libsonnet.
(import "bidaf.libsonnet")
