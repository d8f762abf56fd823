// BCN (McCann et al. 2017) on SST-5, with ELMo at its input and/or at its integrator's output
// (Peters et al. 2018, section 5.1 and Table 1: 51.4 -> 54.7 test accuracy with ELMo at both).
// sst_baseline.jsonnet and sst_elmo.jsonnet set the hidden switches below; a config of your own
// can change any hidden field:
//
//   (import "sst.libsonnet") + { use_input_elmo:: true, hidden_dim:: 300, num_epochs:: 40 }
//
// Another biLM needs only its files, e.g. with -o:
//   -o '{"model.elmo.options_file": "/m/options.json", "model.elmo.weight_file": "/m/weights.hdf5"}'
// The model sets the input sizes of its layers from the embedders, the ELMo module and the
// layers before, and its last layer from the labels, so no size here depends on the biLM.
//
// Sized for a 2-core CPU (docs/sentiment.md). What was cut from AllenNLP's BCN + ELMo config on
// SST-5 (allenai/allennlp's training_config/biattentive_classification_network_elmo.jsonnet):
// GloVe 840B (300d, frozen) is replaced by word embeddings learned from scratch with a
// character CNN (no pretrained vectors offline, as in every task here); the pre-encode
// feedforward (300), both biLSTMs (300 a direction) and the maxout layers (1200, 600) shrink to
// 100, 64 and (128, 64); batch 32 instead of 100; 4 epochs instead of 40 with patience 5.
// Training is on the labelled phrases, as AllenNLP's config does (318,582 from the 8,544
// training sentences, 1.31 M words: an epoch is about 8 sentence-level ones), validation and
// test on the sentences (root labels); `use_subtrees:: false` trains on the sentences alone
// (docs/sentiment.md compares the two). Not in AllenNLP's config: each training phrase's ELMo
// is its rows of ELMo of its sentence (`elmo_phrases_in_context`, below).
//
// Data paths default to ../shared/data's SST trees (../common/data.libsonnet); override with
//   allennlp train ... -o '{"train_data_path": "/data/sst/train.txt"}'
local data = import "../common/data.libsonnet";
local elmo = import "../common/elmo.libsonnet";
local embeddings = import "../common/embeddings.libsonnet";
local optimizer = import "../common/optimizer.libsonnet";

{
  use_input_elmo:: false,
  use_integrator_output_elmo:: false,
  use_subtrees:: true,
  // The biLM: another one with elmo_settings+:: { options_file: ..., weight_file: ... }, an
  // ELMoForManyLangs model with elmo_settings:: elmo.efml("/m/en") (its indexer too).
  elmo_settings:: elmo,
  // No dropout of ELMo's own, as in AllenNLP's BCN + ELMo config: BCN drops its embeddings
  // (ELMo at the input included) with `embedding_dropout`, and the pooled vector (ELMo at the
  // output included) with `integrator_dropout`.
  elmo_dropout:: 0.0,
  elmo_regularization:: 0.001,
  // Fixed pre-softmax layer weights instead of learned ones, e.g. elmo.top_layer_only(3): the
  // top layer only (the paper's Table 2); null: learned.
  elmo_scalar_mix_parameters:: null,
  // "bfloat16" runs the biLM's products in bfloat16; null: the module's default, float32.
  elmo_compute_dtype:: null,
  // The frozen biLM's activations, kept from the first epoch for the others: with phrases in
  // context, the 8,544 training sentences' (about 0.6 GB in float32); without, every phrase's
  // (about 6 GB: 1.31 M words and 2 boundary tokens a phrase, 3 layers of 256), of which the
  // shared blocks' 4096 MB would hold two thirds and recompute the rest each epoch.
  elmo_cache_mb:: 8192,
  // Each training phrase's ELMo taken from its sentence's (sst_trees' `phrases_in_context`):
  // the representations testing sees, and the biLM runs once a sentence. false: ELMo of the
  // phrase alone, as AllenNLP's BCN + ELMo config has it.
  elmo_phrases_in_context:: true,
  word_dim:: 100,
  pre_encode_dim:: 100,
  hidden_dim:: 64,
  maxout_dims:: [128, 64],
  num_epochs:: 4,
  batch_size:: 32,
  lr:: 0.001,

  local uses_elmo = self.use_input_elmo || self.use_integrator_output_elmo,
  local num_elmo_places = (if self.use_input_elmo then 1 else 0)
                          + (if self.use_integrator_output_elmo then 1 else 0),
  // No input sizes (`input_size` of the biLSTMs, `input_dim` of the feedforward and the
  // maxout layers): the model sets them.
  local bilstm(hidden_size) = { type: "lstm", hidden_size: hidden_size, bidirectional: true },
  local in_context = uses_elmo && self.use_subtrees && self.elmo_phrases_in_context,
  local reader(use_subtrees) = {
    type: "sst_trees",
    granularity: "5-class",
    use_subtrees: use_subtrees,
    token_indexers: embeddings.indexers + (if uses_elmo then { elmo: $.elmo_settings.indexer } else {}),
    [if use_subtrees && in_context then "phrases_in_context"]: true,
  },

  dataset_reader: reader($.use_subtrees),
  // Dev and test are read by their sentences (root labels) whatever the training reads.
  validation_dataset_reader: reader(false),
  train_data_path: data.sst.train,
  validation_data_path: data.sst.dev,
  test_data_path: data.sst.test,
  evaluate_on_test: true,
  // Word embeddings are learned from scratch: words seen once in train become unknown, so
  // the model learns an embedding for unseen words, and dev/test add none.
  datasets_for_vocab_creation: ["train"],
  vocabulary: { min_count: { tokens: 2 } },

  model: {
    type: "bcn_classifier",
    text_field_embedder: {
      token_embedders: {
        tokens: embeddings.word_embedder($.word_dim),
        token_characters: embeddings.char_embedder(),
      },
    },
    [if uses_elmo then "elmo"]: $.elmo_settings.module(
      num_output_representations=num_elmo_places,
      dropout=$.elmo_dropout,
      scalar_mix_parameters=$.elmo_scalar_mix_parameters,
      compute_dtype=$.elmo_compute_dtype,
      cache_mb=$.elmo_cache_mb,
    ),
    use_input_elmo: $.use_input_elmo,
    use_integrator_output_elmo: $.use_integrator_output_elmo,
    embedding_dropout: 0.5,
    pre_encode_feedforward: {
      num_layers: 1, hidden_dims: [$.pre_encode_dim], activations: ["relu"], dropout: [0.25],
    },
    encoder: bilstm($.hidden_dim),
    integrator: bilstm($.hidden_dim),
    integrator_dropout: 0.1,
    // The hidden maxout layers; the model adds the linear layer to the labels.
    output_layer: {
      num_layers: std.length($.maxout_dims), output_dims: $.maxout_dims, pool_sizes: 4,
      dropout: [0.2, 0.3],
    },
    [if uses_elmo then "regularizer"]: elmo.regularizer($.elmo_regularization),
  },
  // Buckets by the phrase's length, not its sentence's (the longest field, AllenNLP's guess).
  data_loader: optimizer.data_loader($.batch_size)
               + (if in_context then { batch_sampler+: { sorting_keys: ["tokens"] } } else {}),
  trainer: optimizer.trainer(num_epochs=$.num_epochs, lr=$.lr, patience=3,
                             validation_metric="+accuracy", grad_norm=5.0),
}
