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
// No size here depends on the biLM: the model sizes its layers from the embedders and the
// `elmo` module, so another biLM needs only its files:
//   -o '{"model.elmo.options_file": "/m/options.json", "model.elmo.weight_file": "/m/weights.hdf5"}'
local data = import "../common/data.libsonnet";
local elmo = import "../common/elmo.libsonnet";
local embeddings = import "../common/embeddings.libsonnet";
local optimizer = import "../common/optimizer.libsonnet";

local hidden_size = 100;
local word_dim = 100;
local num_filters = 100;
local elmo_regularization = 0.001;

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

local lstm(num_layers=1) = {
  type: "lstm",
  hidden_size: hidden_size,
  num_layers: num_layers,
  bidirectional: true,
  dropout: if num_layers > 1 then 0.2 else 0.0,
};

{
  use_input_elmo:: false,
  use_output_elmo:: false,
  local uses_elmo = self.use_input_elmo || self.use_output_elmo,
  local num_elmo_places = (if self.use_input_elmo then 1 else 0) + (if self.use_output_elmo then 1 else 0),
  local indexers = embeddings.indexers + (if uses_elmo then { elmo: elmo.indexer } else {}),
  dataset_reader: reader(indexers, true, passage_length_limit=400),
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
        tokens: embeddings.word_embedder(word_dim),
        token_characters: embeddings.char_embedder(num_filters=num_filters, ngram_filter_sizes=[5]),
      },
    },
    num_highway_layers: 2,
    phrase_layer: lstm(),
    modeling_layer: lstm(num_layers=2),
    span_end_encoder: lstm(),
    dropout: 0.2,
    max_span_length: 30,
    [if uses_elmo then "elmo"]: elmo.module(num_output_representations=num_elmo_places, dropout=0.5),
    use_input_elmo: $.use_input_elmo,
    use_output_elmo: $.use_output_elmo,
    [if uses_elmo then "regularizer"]: elmo.regularizer(elmo_regularization),
  },
  data_loader: optimizer.data_loader(batch_size=32),
  trainer: optimizer.trainer(num_epochs=10, lr=0.001, patience=3, validation_metric="+f1"),
}
