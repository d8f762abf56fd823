// ESIM + ELMo at the input and the output (two layer weightings of one biLM run), the
// paper's SNLI setting.
(import "esim.libsonnet") + { use_input_elmo:: true, use_output_elmo:: true }
