// CoNLL-2003 NER baseline of the ELMo paper (Peters et al. 2018, section 5.1): word and
// character-CNN embeddings, a 2-layer biLSTM and a CRF with BIOUL transitions.
//   allennlp train training_configs/ner/ner_baseline.jsonnet -s /tmp/ner_baseline \
//     --include-package elmo_plugin
// Sizes and paths are fields of the resulting JSON, so `-o` overrides them, e.g.
//   -o '{"trainer.num_epochs": 3, "model.encoder.hidden_size": 100}'
import "ner.libsonnet"
