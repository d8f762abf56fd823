// SRL with ELMo (Peters et al. 2018, section 5.1): the baseline of srl_baseline.jsonnet
// with the ELMo vector concatenated to its word and character embeddings, dropout on
// ELMo, and the paper's lambda * ||w||^2 on the layer weights.
//   allennlp train training_configs/srl/srl_elmo.jsonnet -s /tmp/srl_elmo \
//     --include-package elmo_plugin
// Another biLM (e.g. one exported by `allennlp elmo-export`) needs its files and its output
// size (2 * lstm.projection_dim of its options.json) added to the encoder input,
// 264 + that (word 100 + characters 64 + predicate 100):
//   -o '{"model.text_field_embedder.token_embedders.elmo.options_file": "/m/options.json",
//        "model.text_field_embedder.token_embedders.elmo.weight_file": "/m/weights.hdf5",
//        "model.encoder.input_size": 1288}'
local baseline = import "srl_baseline.jsonnet";
local elmo = import "../common/elmo.libsonnet";

// The default biLM's output size: 2 * projection_dim of its options.json.
local elmo_dim = 2 * (import "../../fixtures/elmo/options.json").lstm.projection_dim;
local regularization = 0.001;

baseline + {
  dataset_reader+: {
    token_indexers+: { elmo: elmo.indexer },
  },
  model+: {
    text_field_embedder+: {
      token_embedders+: { elmo: elmo.embedder(dropout=0.5, cache=true) },
    },
    encoder+: { input_size+: elmo_dim },
    regularizer: elmo.regularizer(regularization),
  },
}
