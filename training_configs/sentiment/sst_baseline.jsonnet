// SST-5 baseline: BCN with word and character embeddings trained from scratch, no ELMo.
//   allennlp train training_configs/sentiment/sst_baseline.jsonnet -s /tmp/sst_baseline \
//     --include-package elmo_plugin
// Sizes and paths are fields of the resulting JSON, so `-o` overrides them, e.g.
//   -o '{"trainer.num_epochs": 3, "model.encoder.hidden_size": 32}'
import "sst.libsonnet"
