// The SRL model of the srl_*.jsonnet configs, with the hidden switch `use_input_elmo`, and its
// sizes, label mode, training budget and ELMo's settings (whether the biLM is fine-tuned among
// them) as hidden fields a config of your own can change:
//   (import "srl.libsonnet") + { use_input_elmo:: true, elmo_regularization:: 0.01, num_layers:: 8 }
// (experiments/paper_tables.py sets its runs' budgets and biLM this way.)
local data = import "../common/data.libsonnet";
local elmo = import "../common/elmo.libsonnet";
local embeddings = import "../common/embeddings.libsonnet";
local optimizer = import "../common/optimizer.libsonnet";
local tags = import "propbank_tags.libsonnet";

{
  // ELMo at the input (Peters et al. 2018, section 5.1), concatenated to the word and character
  // embeddings, with dropout and the paper's lambda * ||w||^2 on the layer weights: the ELMo
  // config sets the switch, as the SNLI and SQuAD configs do.
  use_input_elmo:: false,
  // The biLM: another one with elmo_settings+:: { options_file: ..., weight_file: ... }, an
  // ELMoForManyLangs model with elmo_settings:: elmo.efml("/m/en") (its indexer too).
  elmo_settings:: elmo,
  elmo_dropout:: 0.5,
  elmo_regularization:: 0.001,
  // The paper keeps the biLM frozen; fine-tuned it has no activation cache (its activations
  // change with every update), so each epoch runs the biLM forward and backward.
  fine_tune_elmo:: false,
  // Fixed pre-softmax layer weights instead of learned ones, e.g. elmo.top_layer_only(3): the
  // top layer only (the paper's Table 2); null: learned.
  elmo_scalar_mix_parameters:: null,
  // "bfloat16" runs the biLM's products in bfloat16; null: the embedder's default, float32.
  elmo_compute_dtype:: null,

  // Labels are BIO spans over each argument head's dependency subtree ("span"), or the role on
  // each argument's head, CoNLL-2009 style ("head"): the reader and the model both follow it.
  label_mode:: "span",
  word_dim:: 100,
  char_filters:: 64,
  predicate_dim:: 100,
  hidden_size:: 300,
  num_layers:: 4,
  batch_size:: 32,
  num_epochs:: 20,
  patience:: 4,
  local indexers = embeddings.indexers + (if self.use_input_elmo then { elmo: $.elmo_settings.indexer } else {}),

  dataset_reader: {
    type: "universal_propbank_srl",
    label_mode: $.label_mode,
    token_indexers: indexers,
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
    label_mode: $.label_mode,
    text_field_embedder: {
      token_embedders: {
        tokens: embeddings.word_embedder($.word_dim),
        token_characters: embeddings.char_embedder(num_filters=$.char_filters),
        [if $.use_input_elmo then "elmo"]: $.elmo_settings.embedder(
          dropout=$.elmo_dropout,
          requires_grad=$.fine_tune_elmo,
          cache=true,
          scalar_mix_parameters=$.elmo_scalar_mix_parameters,
          compute_dtype=$.elmo_compute_dtype,
        ),
      },
    },
    [if $.use_input_elmo then "regularizer"]: elmo.regularizer($.elmo_regularization),
    predicate_embedding_dim: $.predicate_dim,
    embedding_dropout: 0.1,
    // No input_size: the model sets it from the embedders and predicate_embedding_dim.
    encoder: {
      type: "alternating_lstm",
      hidden_size: $.hidden_size,
      num_layers: $.num_layers,
      recurrent_dropout_probability: 0.1,
      use_highway: true,
    },
    // He et al. initialise the LSTM weights orthogonally. The regex also matches the biLM's
    // character_encoder, which must keep its pretrained weights (left out without ELMo, so the
    // baseline's config stays as it was).
    initializer: {
      regexes: [[".*_encoder.*weight", { type: "orthogonal" }]],
      [if $.use_input_elmo then "prevent_regexes"]: [elmo.bilm_parameters_regex],
    },
  },
  data_loader: optimizer.data_loader(batch_size=$.batch_size),
  trainer: optimizer.trainer(num_epochs=$.num_epochs, lr=0.001, patience=$.patience,
                             validation_metric="+f1-measure-overall"),
}
