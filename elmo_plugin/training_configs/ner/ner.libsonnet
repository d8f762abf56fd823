// The NER model of the ner_*.jsonnet configs, with the hidden switch `use_input_elmo`
// (and ELMo's dropout and regularization as hidden fields a config of your own can change):
//   (import "ner.libsonnet") + { use_input_elmo:: true, elmo_regularization:: 0.01 }
local data = import "../common/data.libsonnet";
local elmo = import "../common/elmo.libsonnet";
local embeddings = import "../common/embeddings.libsonnet";
local optimizer = import "../common/optimizer.libsonnet";

local tag_scheme = "BIOUL";
local word_dim = 100;

{
  // ELMo at the input (Peters et al. 2018, section 5.1), concatenated to the word and character
  // embeddings, with dropout and the paper's lambda * ||w||^2 on the layer weights: the ELMo
  // config sets the switch, as the SNLI and SQuAD configs do.
  use_input_elmo:: false,
  elmo_dropout:: 0.5,
  elmo_regularization:: 0.001,
  local indexers = embeddings.indexers + (if self.use_input_elmo then { elmo: elmo.indexer } else {}),

  dataset_reader: {
    type: "conll2003_ner",
    tag_scheme: tag_scheme,
    token_indexers: indexers,
  },
  train_data_path: data.conll2003.train,
  validation_data_path: data.conll2003.dev,
  test_data_path: data.conll2003.test,
  evaluate_on_test: true,
  // Word embeddings are learned from scratch: words seen once in train become unknown, so
  // the model learns an embedding for unseen words, and dev/test add none.
  datasets_for_vocab_creation: ["train"],
  vocabulary: { min_count: { tokens: 2 } },
  model: {
    type: "bilstm_crf_tagger",
    label_encoding: tag_scheme,
    dropout: 0.5,
    text_field_embedder: {
      token_embedders: {
        tokens: embeddings.word_embedder(word_dim),
        token_characters: embeddings.char_embedder(num_filters=64),
        [if $.use_input_elmo then "elmo"]: elmo.embedder(dropout=$.elmo_dropout, cache=true),
      },
    },
    [if $.use_input_elmo then "regularizer"]: elmo.regularizer($.elmo_regularization),
    // No input_size: the model sets it from the embedders' output size.
    encoder: {
      type: "lstm",
      hidden_size: 200,
      num_layers: 2,
      dropout: 0.5,
      bidirectional: true,
    },
  },
  data_loader: optimizer.data_loader(batch_size=32),
  trainer: optimizer.trainer(num_epochs=10, lr=0.001, patience=3,
                             validation_metric="+f1-measure-overall"),
}
