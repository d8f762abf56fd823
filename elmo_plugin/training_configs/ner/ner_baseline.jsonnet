// CoNLL-2003 NER baseline of the ELMo paper (Peters et al. 2018, section 5.1): word and
// character-CNN embeddings, a 2-layer biLSTM and a CRF with BIOUL transitions.
//   allennlp train elmo_plugin/training_configs/ner/ner_baseline.jsonnet -s /tmp/ner_baseline \
//     --include-package elmo_plugin
// Sizes and paths are fields of the resulting JSON, so `-o` overrides them, e.g.
//   -o '{"trainer.num_epochs": 3, "model.encoder.hidden_size": 100}'
local data = import "../common/data.libsonnet";
local embeddings = import "../common/embeddings.libsonnet";
local optimizer = import "../common/optimizer.libsonnet";

local tag_scheme = "BIOUL";
local word_dim = 100;

{
  dataset_reader: {
    type: "conll2003_ner",
    tag_scheme: tag_scheme,
    token_indexers: embeddings.indexers,
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
      },
    },
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
