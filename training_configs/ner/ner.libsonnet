// The NER model of the ner_*.jsonnet configs, with the hidden switch `use_input_elmo`, and its
// sizes, training budget and ELMo's settings as hidden fields a config of your own can change:
//   (import "ner.libsonnet") + { use_input_elmo:: true, elmo_regularization:: 0.01, num_epochs:: 6 }
// (experiments/paper_tables.py sets its runs' budgets and biLM this way.)
local data = import "../common/data.libsonnet";
local elmo = import "../common/elmo.libsonnet";
local embeddings = import "../common/embeddings.libsonnet";
local optimizer = import "../common/optimizer.libsonnet";

local tag_scheme = "BIOUL";

{
  // ELMo at the input (Peters et al. 2018, section 5.1), concatenated to the word and character
  // embeddings, with dropout and the paper's lambda * ||w||^2 on the layer weights: the ELMo
  // config sets the switch, as the SNLI and SQuAD configs do.
  use_input_elmo:: false,
  // The biLM: another one with elmo_settings+:: { options_file: ..., weight_file: ... }, an
  // ELMoForManyLangs model with elmo_settings:: elmo.efml("/m/en") (its indexer too).
  elmo_settings:: elmo,
  // Fine-tune the biLM with the task (then without the activation cache, which needs it frozen).
  elmo_requires_grad:: false,
  elmo_dropout:: 0.5,
  elmo_regularization:: 0.001,
  // Fixed pre-softmax layer weights instead of learned ones, e.g. elmo.top_layer_only(3): the
  // top layer only (the paper's Table 2); null: learned.
  elmo_scalar_mix_parameters:: null,
  // "bfloat16" runs the biLM's products in bfloat16; null: the embedder's default, float32.
  elmo_compute_dtype:: null,

  word_dim:: 100,
  char_filters:: 64,
  hidden_size:: 200,
  num_layers:: 2,
  batch_size:: 32,
  num_epochs:: 10,
  patience:: 3,
  // Every tag of the scheme in the label vocabulary, not only those of the training data (which
  // a sample of it can miss while dev has them).
  all_tags_in_vocabulary:: false,

  local indexers = embeddings.indexers
                   + (if self.use_input_elmo then { elmo: $.elmo_settings.indexer } else {}),
  local all_tags = ["O"] + [
    prefix + "-" + kind
    for kind in ["PER", "LOC", "ORG", "MISC"]
    for prefix in std.stringChars(tag_scheme)
    if prefix != "O"
  ],

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
  vocabulary: {
    min_count: { tokens: 2 },
    [if $.all_tags_in_vocabulary then "tokens_to_add"]: { labels: all_tags },
  },
  model: {
    type: "bilstm_crf_tagger",
    label_encoding: tag_scheme,
    dropout: 0.5,
    text_field_embedder: {
      token_embedders: {
        tokens: embeddings.word_embedder($.word_dim),
        token_characters: embeddings.char_embedder(num_filters=$.char_filters),
        [if $.use_input_elmo then "elmo"]: $.elmo_settings.embedder(
          requires_grad=$.elmo_requires_grad,
          dropout=$.elmo_dropout,
          cache=true,
          scalar_mix_parameters=$.elmo_scalar_mix_parameters,
          compute_dtype=$.elmo_compute_dtype,
        ),
      },
    },
    [if $.use_input_elmo then "regularizer"]: elmo.regularizer($.elmo_regularization),
    // No input_size: the model sets it from the embedders' output size.
    encoder: {
      type: "lstm",
      hidden_size: $.hidden_size,
      num_layers: $.num_layers,
      dropout: 0.5,
      bidirectional: true,
    },
  },
  data_loader: optimizer.data_loader(batch_size=$.batch_size),
  trainer: optimizer.trainer(num_epochs=$.num_epochs, lr=0.001, patience=$.patience,
                             validation_metric="+f1-measure-overall"),
}
