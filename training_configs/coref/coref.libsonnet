// End-to-end coreference by span ranking (Lee et al. 2017) on LitBank, standing in for the
// ELMo paper's CoNLL-2012 task (Peters et al. 2018, section 4 and Table 1: 67.2 -> 70.4
// average F1 with ELMo at the input). coref_baseline.jsonnet and coref_elmo.jsonnet set the
// hidden switch below; a config of your own can change any hidden field:
//
//   (import "coref.libsonnet") + { use_elmo:: true, hidden_dim:: 200, max_antecedents:: 250 }
//
// Another biLM needs only its files, e.g. with -o:
//   -o '{"model.elmo.options_file": "/m/options.json", "model.elmo.weight_file": "/m/weights.hdf5"}'
// The model sets the input sizes of its layers from the embedders, the ELMo module and the
// layers before, so no size here depends on the biLM.
//
// Sized for one thread of a 2-core CPU (docs/coref.md has the measured times). Cut from Lee
// et al. 2017 (its appendix) and allennlp-models' coref config: GloVe (300d) + Turian (50d),
// fixed, become 100d word embeddings learned from scratch with a 64-filter character CNN (no
// pretrained vectors offline, as in every task here); the biLSTM's 200 a direction shrinks to
// 64; the mention scorer's two hidden layers of 150 to one of 100 and the antecedent scorer's
// two of 150 to two of 100; span width 10 to 6 (98.0% of LitBank's non-singleton mentions
// fit); spans kept 0.4 a word to 0.25; antecedents 250 to 20 (about 87% of the links to the
// nearest earlier mention of the same entity fit, counting 0.25 kept spans a word); training
// documents are cut into segments of at most 512 words (evaluation reads whole documents);
// 150 epochs to 8 (dev F1 gains little after 5).
//
// Data paths default to ../shared/data's LitBank split (../common/data.libsonnet); override with
//   allennlp train ... -o '{"train_data_path": "/data/litbank/train_docs.txt"}'
local data = import "../common/data.libsonnet";
local elmo = import "../common/elmo.libsonnet";
local embeddings = import "../common/embeddings.libsonnet";
local optimizer = import "../common/optimizer.libsonnet";

{
  use_elmo:: false,
  // The biLM: another one with elmo_settings+:: { options_file: ..., weight_file: ... }, an
  // ELMoForManyLangs model with elmo_settings:: elmo.efml("/m/en") (its indexer too).
  elmo_settings:: elmo,
  elmo_dropout:: 0.5,
  elmo_regularization:: 0.001,
  // Fixed pre-softmax layer weights instead of learned ones, e.g. elmo.top_layer_only(3): the
  // top layer only (the paper's Table 2); null: learned.
  elmo_scalar_mix_parameters:: null,
  // "bfloat16" runs the biLM's products in bfloat16; null: the module's default, float32.
  elmo_compute_dtype:: null,
  word_dim:: 100,
  char_filters:: 64,
  hidden_dim:: 64,
  feedforward_dim:: 100,
  feature_size:: 20,
  max_span_width:: 6,
  spans_per_word:: 0.25,
  max_antecedents:: 20,
  // Training segments (dev and test documents are read whole).
  max_sentences:: null,
  max_tokens:: 512,
  // LitBank annotates singletons; CoNLL-2012 does not, and the model never predicts one: they
  // are dropped from the gold clusters, so the scores are CoNLL-2012's.
  keep_singletons:: false,
  lexical_dropout:: 0.5,
  feedforward_dropout:: 0.2,
  num_epochs:: 8,
  patience:: 3,
  lr:: 0.001,

  local reader(segmented) = {
    type: "litbank_coref",
    max_span_width: $.max_span_width,
    remove_singleton_clusters: !$.keep_singletons,
    [if segmented && $.max_sentences != null then "max_sentences"]: $.max_sentences,
    [if segmented && $.max_tokens != null then "max_tokens"]: $.max_tokens,
    token_indexers: embeddings.indexers + (if $.use_elmo then { elmo: $.elmo_settings.indexer } else {}),
  },
  // No input sizes: the model sets them.
  local feedforward(num_layers) = {
    num_layers: num_layers,
    hidden_dims: $.feedforward_dim,
    activations: "relu",
    dropout: $.feedforward_dropout,
  },

  dataset_reader: reader(true),
  validation_dataset_reader: reader(false),
  train_data_path: data.litbank.train,
  validation_data_path: data.litbank.dev,
  test_data_path: data.litbank.test,
  evaluate_on_test: true,
  // Word embeddings are learned from scratch: words seen once in train become unknown, so
  // the model learns an embedding for unseen words, and dev/test add none.
  datasets_for_vocab_creation: ["train"],
  vocabulary: { min_count: { tokens: 2 } },

  model: {
    type: "span_ranking_coref",
    text_field_embedder: {
      token_embedders: {
        tokens: embeddings.word_embedder($.word_dim),
        token_characters: embeddings.char_embedder(num_filters=$.char_filters),
      },
    },
    [if $.use_elmo then "elmo"]: $.elmo_settings.module(
      num_output_representations=1,
      dropout=$.elmo_dropout,
      scalar_mix_parameters=$.elmo_scalar_mix_parameters,
      compute_dtype=$.elmo_compute_dtype,
    ),
    use_input_elmo: $.use_elmo,
    lexical_dropout: $.lexical_dropout,
    context_layer: { type: "lstm", hidden_size: $.hidden_dim, bidirectional: true },
    mention_feedforward: feedforward(1),
    // The antecedent scorer: its pair layer (antecedent_hidden_dim), then these layers.
    antecedent_hidden_dim: $.feedforward_dim,
    antecedent_dropout: $.feedforward_dropout,
    antecedent_feedforward: feedforward(1),
    feature_size: $.feature_size,
    max_span_width: $.max_span_width,
    spans_per_word: $.spans_per_word,
    max_antecedents: $.max_antecedents,
    [if $.use_elmo then "regularizer"]: elmo.regularizer($.elmo_regularization),
  },
  // One segment (training) or document (evaluation) a batch, as Lee et al.
  data_loader: optimizer.data_loader(batch_size=1),
  validation_data_loader: { batch_size: 1 },
  trainer: optimizer.trainer(num_epochs=$.num_epochs, lr=$.lr, patience=$.patience,
                             validation_metric="+coref_f1", grad_norm=5.0),
}
