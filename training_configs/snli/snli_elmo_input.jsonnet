// ESIM + ELMo concatenated to the word embeddings.
(import "esim.libsonnet") + { use_input_elmo:: true }
