// SRL with ELMo whose biLM is fine-tuned with the SRL model (srl_elmo.jsonnet keeps it frozen,
// as the paper does; `python experiments/paper_tables.py finetuned` compares the two, and
// docs/paper_tables.md has the result). With no activation cache an epoch costs several times
// a frozen one; on a CPU with AVX512_BF16 or a GPU, ELMo in bfloat16 makes it affordable:
//   allennlp train training_configs/srl/srl_elmo_finetuned.jsonnet -s /tmp/srl_ft \
//     --include-package elmo_plugin \
//     -o '{"model.text_field_embedder.token_embedders.elmo.compute_dtype": "bfloat16"}'
(import "srl.libsonnet") + { use_input_elmo:: true, fine_tune_elmo:: true }
