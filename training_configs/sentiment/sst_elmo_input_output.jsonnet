// SST-5 with ELMo at the input and at the output of BCN's integrator (two layer weightings of
// one biLM run), the paper's SST-5 setting (Peters et al. 2018, section 5.1 and Table 1).
//   allennlp train training_configs/sentiment/sst_elmo_input_output.jsonnet \
//     -s /tmp/sst_elmo_input_output --include-package elmo_plugin
(import "sst.libsonnet") + { use_input_elmo:: true, use_integrator_output_elmo:: true }
