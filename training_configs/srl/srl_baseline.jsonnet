// SRL baseline: the deep biLSTM tagger of He et al. (2017), which the ELMo paper
// (Peters et al. 2018, section 5.1) extends, on Universal PropBank English-EWT (the fixed
// split of ../shared/data, README section 8): word and character-CNN embeddings plus a
// predicate-indicator embedding, LSTM layers in alternating directions with highway
// connections and recurrent dropout, a softmax per token and BIO-constrained Viterbi.
//   allennlp train training_configs/srl/srl_baseline.jsonnet -s /tmp/srl_baseline \
//     --include-package elmo_plugin
// Labels are BIO spans over each argument head's dependency subtree (label_mode "span").
// For CoNLL-2009-style head-word labels and (predicate, head, role) F1, switch both the
// reader and the model (the model refuses a mismatch; the validation metric keeps its name):
//   -o '{"dataset_reader.label_mode": "head", "model.label_mode": "head"}'
// or set the hidden field: (import "srl.libsonnet") + { label_mode:: "head" }. He et al. use 8
// layers; 4 keep CPU training affordable:
//   -o '{"model.encoder.num_layers": 8}'
import "srl.libsonnet"
