// SST-5 with ELMo at BCN's input (AllenNLP's BCN + ELMo setting on SST-5, and this project's
// Table 1 row: docs/sentiment.md has why it is not the paper's input-and-output one).
//   allennlp train training_configs/sentiment/sst_elmo.jsonnet -s /tmp/sst_elmo \
//     --include-package elmo_plugin
// sst_elmo_input_output.jsonnet adds ELMo at the integrator's output, as the paper does.
// Another biLM (e.g. one exported by `allennlp elmo-export`) needs only its files:
//   -o '{"model.elmo.options_file": "/m/options.json", "model.elmo.weight_file": "/m/weights.hdf5"}'
(import "sst.libsonnet") + { use_input_elmo:: true }
