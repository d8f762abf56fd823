// CoNLL-2003 NER with ELMo (Peters et al. 2018, section 5.1): the baseline of
// ner_baseline.jsonnet with the ELMo vector concatenated to its word and character
// embeddings, dropout on ELMo, and the paper's lambda * ||w||^2 on the layer weights.
//   allennlp train training_configs/ner/ner_elmo.jsonnet -s /tmp/ner_elmo \
//     --include-package elmo_plugin
// Another biLM (e.g. one exported by `allennlp elmo-export`) needs only its files: the model
// sizes the encoder input from the embedders (word + characters + ELMo), whatever the
// biLM's output size:
//   -o '{"model.text_field_embedder.token_embedders.elmo.options_file": "/m/options.json",
//        "model.text_field_embedder.token_embedders.elmo.weight_file": "/m/weights.hdf5"}'
// and the regularizer's lambda:
//   -o '{"model.regularizer.regexes.0.1.alpha": 0.01}'
// An ELMoForManyLangs model (its folder), and its indexer with it, in a config of your own:
//   local elmo = import "elmo_plugin/training_configs/common/elmo.libsonnet";
//   (import "elmo_plugin/training_configs/ner/ner_elmo.jsonnet")
//   + { elmo_settings:: elmo.efml("/m/en"), elmo_requires_grad:: false }
(import "ner.libsonnet") + { use_input_elmo:: true }
