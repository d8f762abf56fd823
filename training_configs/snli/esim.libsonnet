// ESIM (Chen et al. 2017) on SNLI, with ELMo at its input and/or output (Peters et al. 2018,
// Table 3). The four snli_*.jsonnet configs set the two hidden switches below; a config of
// your own can change any hidden field:
//
//   local elmo = import "../common/elmo.libsonnet";
//   (import "esim.libsonnet") + {
//     use_input_elmo:: true, use_output_elmo:: true,
//     elmo_settings:: elmo + { options_file: "/models/elmo/options.json", weight_file: "/models/elmo/weights.hdf5" },
//   }
//
// Another biLM needs only its files, e.g. with -o:
//   -o '{"model.elmo.options_file": "/m/options.json", "model.elmo.weight_file": "/m/weights.hdf5"}'
// The model sets the input sizes of its layers from the embedders, the ELMo module and the
// layers before, so no size here depends on the biLM and none is stated twice.
//
// Data paths default to the fixed splits (../common/data.libsonnet); override them with
//   allennlp train ... -o '{"train_data_path": "/data/snli_1.0/snli_1.0_train.jsonl"}'
local data = import "../common/data.libsonnet";
local elmo = import "../common/elmo.libsonnet";
local embeddings = import "../common/embeddings.libsonnet";
local optimizer = import "../common/optimizer.libsonnet";

{
  use_input_elmo:: false,
  use_output_elmo:: false,
  // The biLM: another one with elmo_settings+:: { options_file: ..., weight_file: ... }, an
  // ELMoForManyLangs model with elmo_settings:: elmo.efml("/m/en") (its indexer too).
  elmo_settings:: elmo,
  // No dropout of ELMo's own: ESIM drops its encoder's input (variational, `dropout`), ELMo at
  // the input included, and with ELMo's dropout on top (0.5) ELMo at the input and output cost
  // 2.5 points of accuracy instead of adding 3 (docs/paper_tables.md, "Where our numbers differ").
  // AllenNLP's esim_elmo.jsonnet also sets it to 0.
  elmo_dropout:: 0.0,
  elmo_regularization:: 0.001,
  // Fixed pre-softmax layer weights instead of learned ones, e.g. elmo.top_layer_only(3): the
  // top layer only (the paper's Table 2); null: learned.
  elmo_scalar_mix_parameters:: null,
  // "bfloat16" runs the biLM's products in bfloat16; null: the module's default, float32.
  elmo_compute_dtype:: null,
  word_dim:: 100,
  char_filters:: 64,
  hidden_dim:: 300,
  dropout:: 0.5,
  num_epochs:: 10,
  batch_size:: 32,
  lr:: 0.0004,

  local uses_elmo = self.use_input_elmo || self.use_output_elmo,
  local num_elmo_places = (if self.use_input_elmo then 1 else 0) + (if self.use_output_elmo then 1 else 0),
  // No input sizes (`input_size` of the encoders, `input_dim` of the feedforwards): the model
  // sets them.
  local bilstm(hidden_size) = { type: "lstm", hidden_size: hidden_size, bidirectional: true },
  // Only the task's own layers: the initializer must never touch the pretrained biLM.
  local task_layers = "^_(encoder|inference_encoder|projection_feedforward|output_feedforward|classification_layer)",

  dataset_reader: {
    type: "snli_jsonl",
    token_indexers: embeddings.indexers + (if uses_elmo then { elmo: $.elmo_settings.indexer } else {}),
  },
  train_data_path: data.snli.train,
  validation_data_path: data.snli.dev,
  test_data_path: data.snli.test,
  evaluate_on_test: true,

  model: {
    type: "esim_nli",
    text_field_embedder: {
      token_embedders: {
        tokens: embeddings.word_embedder($.word_dim),
        token_characters: embeddings.char_embedder(num_filters=$.char_filters),
      },
    },
    [if uses_elmo then "elmo"]: $.elmo_settings.module(
      num_output_representations=num_elmo_places,
      dropout=$.elmo_dropout,
      scalar_mix_parameters=$.elmo_scalar_mix_parameters,
      compute_dtype=$.elmo_compute_dtype,
    ),
    use_input_elmo: $.use_input_elmo,
    use_output_elmo: $.use_output_elmo,
    encoder: bilstm($.hidden_dim),
    projection_feedforward: { hidden_dims: $.hidden_dim, num_layers: 1, activations: "relu" },
    inference_encoder: bilstm($.hidden_dim),
    output_feedforward: { hidden_dims: $.hidden_dim, num_layers: 1, activations: "tanh" },
    dropout: $.dropout,
    initializer: {
      regexes: [
        [task_layers + ".*(linear_layers|classification_layer).*weight", { type: "xavier_uniform" }],
        [task_layers + ".*weight_ih.*", { type: "xavier_uniform" }],
        [task_layers + ".*weight_hh.*", { type: "orthogonal" }],
        [task_layers + ".*bias_ih.*", { type: "zero" }],
        [task_layers + ".*bias_hh.*", { type: "lstm_hidden_bias" }],
      ],
    },
    [if uses_elmo then "regularizer"]: elmo.regularizer($.elmo_regularization),
  },
  data_loader: optimizer.data_loader($.batch_size) + {
    batch_sampler+: { sorting_keys: ["premise", "hypothesis"] },
  },
  trainer: optimizer.trainer(num_epochs=$.num_epochs, lr=$.lr, patience=3,
                             validation_metric="+accuracy", grad_norm=10.0),
}
