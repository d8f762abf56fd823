// SRL baseline: the deep biLSTM tagger of He et al. (2017), which the ELMo paper
// (Peters et al. 2018, section 5.1) extends, on Universal PropBank English-EWT (the fixed
// split of ../shared/data, README section 8): word and character-CNN embeddings plus a
// predicate-indicator embedding, LSTM layers in alternating directions with highway
// connections and recurrent dropout, a softmax per token and BIO-constrained Viterbi.
//   allennlp train elmo_plugin/training_configs/srl/srl_baseline.jsonnet -s /tmp/srl_baseline \
//     --include-package elmo_plugin
// Labels are BIO spans over each argument head's dependency subtree (label_mode "span").
// For CoNLL-2009-style head-word labels and (predicate, head, role) F1, switch both the
// reader and the model (the model refuses a mismatch; the validation metric keeps its name):
//   -o '{"dataset_reader.label_mode": "head", "model.label_mode": "head"}'
// or set `label_mode` below. He et al. use 8 layers; 4 keep CPU training affordable:
//   -o '{"model.encoder.num_layers": 8}'
local data = import "../common/data.libsonnet";
local embeddings = import "../common/embeddings.libsonnet";
local optimizer = import "../common/optimizer.libsonnet";
local tags = import "propbank_tags.libsonnet";

local label_mode = "span";
local word_dim = 100;

{
  dataset_reader: {
    type: "universal_propbank_srl",
    label_mode: label_mode,
    token_indexers: embeddings.indexers,
  },
  train_data_path: data.srl.train,
  validation_data_path: data.srl.dev,
  test_data_path: data.srl.test,
  evaluate_on_test: true,
  // Words seen once in train become unknown, so the model learns an embedding for unseen
  // words; dev/test add no words. All PropBank tags get an output (see propbank_tags);
  // each label mode has its own namespace, so both are listed.
  datasets_for_vocab_creation: ["train"],
  vocabulary: {
    min_count: { tokens: 2 },
    tokens_to_add: { span_labels: tags.span, head_labels: tags.head },
  },
  model: {
    type: "deep_srl",
    label_mode: label_mode,
    text_field_embedder: {
      token_embedders: {
        tokens: embeddings.word_embedder(word_dim),
        token_characters: embeddings.char_embedder(num_filters=64),
      },
    },
    predicate_embedding_dim: 100,
    embedding_dropout: 0.1,
    // No input_size: the model sets it from the embedders and predicate_embedding_dim.
    encoder: {
      type: "alternating_lstm",
      hidden_size: 300,
      num_layers: 4,
      recurrent_dropout_probability: 0.1,
      use_highway: true,
    },
    // He et al. initialise the LSTM weights orthogonally.
    initializer: { regexes: [[".*_encoder.*weight", { type: "orthogonal" }]] },
  },
  data_loader: optimizer.data_loader(batch_size=32),
  trainer: optimizer.trainer(num_epochs=20, lr=0.001, patience=4,
                             validation_metric="+f1-measure-overall"),
}
