// SRL with ELMo whose biLM is fine-tuned with the SRL model (srl_elmo.jsonnet keeps it frozen,
// as the paper does): on 1,336 training sentences the frozen biLM did not help SRL here, the
// fine-tuned one did (docs/paper_tables.md, "SRL: what we measured"). With no activation
// cache an epoch costs several times a frozen one; on a CPU with AVX512_BF16 or a GPU, ELMo in
// bfloat16 makes it affordable:
//   allennlp train elmo_plugin/training_configs/srl/srl_elmo_finetuned.jsonnet -s /tmp/srl_ft \
//     --include-package elmo_plugin \
//     -o '{"model.text_field_embedder.token_embedders.elmo.compute_dtype": "bfloat16"}'
(import "srl.libsonnet") + { use_input_elmo:: true, fine_tune_elmo:: true }
