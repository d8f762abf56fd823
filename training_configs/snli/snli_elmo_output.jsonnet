// ESIM + ELMo concatenated to the input encoder's output only.
(import "esim.libsonnet") + { use_output_elmo:: true }
