// LitBank coreference baseline: Lee et al.'s span-ranking model with word and character
// embeddings trained from scratch, no ELMo.
//   allennlp train training_configs/coref/coref_baseline.jsonnet -s /tmp/coref_baseline \
//     --include-package elmo_plugin
// Sizes and paths are fields of the resulting JSON, so `-o` overrides them, e.g.
//   -o '{"trainer.num_epochs": 3, "model.context_layer.hidden_size": 32}'
import "coref.libsonnet"
