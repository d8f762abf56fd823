// SRL with ELMo (Peters et al. 2018, section 5.1): the baseline of srl_baseline.jsonnet
// with the ELMo vector concatenated to its word and character embeddings, dropout on
// ELMo, and the paper's lambda * ||w||^2 on the layer weights.
//   allennlp train training_configs/srl/srl_elmo.jsonnet -s /tmp/srl_elmo \
//     --include-package elmo_plugin
// Another biLM (e.g. one exported by `allennlp elmo-export`) needs only its files: the model
// sizes the encoder input from the embedders and the predicate embedding (word +
// characters + ELMo + predicate), whatever the biLM's output size:
//   -o '{"model.text_field_embedder.token_embedders.elmo.options_file": "/m/options.json",
//        "model.text_field_embedder.token_embedders.elmo.weight_file": "/m/weights.hdf5"}'
(import "srl.libsonnet") + { use_input_elmo:: true }
