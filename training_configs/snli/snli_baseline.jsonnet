// ESIM without ELMo (word + character embeddings trained from scratch).
(import "esim.libsonnet")
