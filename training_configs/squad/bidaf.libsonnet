// The BiDAF model (Seo et al. 2017) on SQuAD v1.1 shared by the four squad_*.jsonnet configs,
// with ELMo at its input and/or output: the configs set the two hidden switches below, as the
// SNLI configs do with esim.libsonnet, e.g. (import "bidaf.libsonnet") + { use_input_elmo:: true }.
//
// Data: the fixed splits of ../shared/data (README section 8): train = the first 38 articles
// of the official dev file, test = its last 10. There is no dev split, so the configs train a
// fixed number of epochs without validation (nothing is selected on the test set) and score
// the test split once at the end. With the official files, point the paths at them and add a
// validation set (the model of the best validation F1 is then kept):
//   -o '{"train_data_path": "/data/train-v1.1.json", "validation_data_path": "/data/dev-v1.1.json",
//        "test_data_path": "/data/dev-v1.1.json"}'
// Sizes are plain fields, so `-o` changes them (encoder input sizes follow automatically):
//   -o '{"model.phrase_layer.hidden_size": 50, "trainer.num_epochs": 3}'
// or, with the hidden fields below, in a config of your own:
//   (import "bidaf.libsonnet") + { use_input_elmo:: true, hidden_size:: 50, num_epochs:: 3 }
// (experiments/paper_tables.py sets its runs' budgets and biLM this way.)
// No size here depends on the biLM: the model sizes its layers from the embedders and the
// `elmo` module, so another biLM needs only its files:
//   -o '{"model.elmo.options_file": "/m/options.json", "model.elmo.weight_file": "/m/weights.hdf5"}'
local data = import "../common/data.libsonnet";
local elmo = import "../common/elmo.libsonnet";
local embeddings = import "../common/embeddings.libsonnet";
local optimizer = import "../common/optimizer.libsonnet";

local reader(indexers, skip, passage_length_limit=null) = {
  type: "squad_v1",
  token_indexers: indexers,
  // Without a limit here, the reader's default applies: far above any real passage, it only
  // keeps a malformed file from stalling a run.
  [if passage_length_limit != null then "passage_length_limit"]: passage_length_limit,
  question_length_limit: 50,
  // Training skips questions whose answer was cut off with the passage; evaluation keeps
  // them (they count as misses, as in the official script).
  skip_answers_outside_passage: skip,
};

{
  use_input_elmo:: false,
  use_output_elmo:: false,
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
  char_filters:: 100,
  hidden_size:: 100,
  // Training passages are cut at this many tokens (evaluation keeps them whole).
  passage_length_limit:: 400,
  batch_size:: 32,
  num_epochs:: 10,

  local lstm(num_layers=1) = {
    type: "lstm",
    hidden_size: $.hidden_size,
    num_layers: num_layers,
    bidirectional: true,
    dropout: if num_layers > 1 then 0.2 else 0.0,
  },
  local uses_elmo = self.use_input_elmo || self.use_output_elmo,
  local num_elmo_places = (if self.use_input_elmo then 1 else 0) + (if self.use_output_elmo then 1 else 0),
  local indexers = embeddings.indexers + (if uses_elmo then { elmo: $.elmo_settings.indexer } else {}),
  dataset_reader: reader(indexers, true, passage_length_limit=$.passage_length_limit),
  validation_dataset_reader: reader(indexers, false),
  train_data_path: data.squad.train,
  test_data_path: data.squad.test,
  evaluate_on_test: true,
  // Word embeddings are learned from scratch (no GloVe offline), from train words only.
  datasets_for_vocab_creation: ["train"],
  model: {
    type: "bidaf_rc",
    text_field_embedder: {
      token_embedders: {
        tokens: embeddings.word_embedder($.word_dim),
        token_characters: embeddings.char_embedder(num_filters=$.char_filters,
                                                   ngram_filter_sizes=[5]),
      },
    },
    num_highway_layers: 2,
    phrase_layer: lstm(),
    modeling_layer: lstm(num_layers=2),
    span_end_encoder: lstm(),
    dropout: 0.2,
    max_span_length: 30,
    [if uses_elmo then "elmo"]: $.elmo_settings.module(
      num_output_representations=num_elmo_places,
      dropout=$.elmo_dropout,
      scalar_mix_parameters=$.elmo_scalar_mix_parameters,
      compute_dtype=$.elmo_compute_dtype,
    ),
    use_input_elmo: $.use_input_elmo,
    use_output_elmo: $.use_output_elmo,
    [if uses_elmo then "regularizer"]: elmo.regularizer($.elmo_regularization),
  },
  data_loader: optimizer.data_loader(batch_size=$.batch_size),
  trainer: optimizer.trainer(num_epochs=$.num_epochs, lr=0.001, patience=3,
                             validation_metric="+f1"),
}
