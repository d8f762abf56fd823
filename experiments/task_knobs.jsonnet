// Where the knobs of experiments/paper_tables.py live in the task configs of
// elmo_plugin/training_configs/: it passes the knobs (a task's budget, the biLM files and the
// layer-weight settings), this file turns them into the AllenNLP overrides of a run.
//
//   function(task, budget)       the budget's overrides: {epochs, hidden_size, ...}
//   function(task, elmo)         the ELMo overrides: {options_file, weight_file,
//                                regularization, top_layer_only, num_layers, compute_dtype}
local elmo = import "../elmo_plugin/training_configs/common/elmo.libsonnet";

local embedders = "model.text_field_embedder.token_embedders";

local embedding(budget) = {
  [embedders + ".tokens.embedding_dim"]: budget.word_dim,
  [embedders + ".token_characters.encoder.num_filters"]: budget.char_filters,
  "trainer.num_epochs": budget.epochs,
  "data_loader.batch_sampler.batch_size": budget.batch_size,
};

local tagger(budget) = embedding(budget) + {
  "model.encoder.hidden_size": budget.hidden_size,
  "model.encoder.num_layers": budget.num_layers,
};

local sized(modules, budget) = { ["model." + module]: budget.hidden_size for module in modules };

local tasks = {
  ner: { elmo_field: embedders + ".elmo", budget(budget): tagger(budget) },
  srl: {
    elmo_field: embedders + ".elmo",
    budget(budget): tagger(budget) + {
      "model.predicate_embedding_dim": budget.predicate_dim,
      "dataset_reader.label_mode": budget.label_mode,
      "model.label_mode": budget.label_mode,
    },
  },
  snli: {
    elmo_field: "model.elmo",
    budget(budget): embedding(budget) + sized([
      "encoder.hidden_size", "projection_feedforward.hidden_dims",
      "inference_encoder.hidden_size", "output_feedforward.hidden_dims",
    ], budget) + { "trainer.optimizer.lr": budget.lr },
  },
  squad: {
    elmo_field: "model.elmo",
    budget(budget): embedding(budget) + sized([
      layer + ".hidden_size" for layer in ["phrase_layer", "modeling_layer", "span_end_encoder"]
    ], budget) + { "dataset_reader.passage_length_limit": budget.passage_length_limit },
  },
  sst: {
    elmo_field: "model.elmo",
    budget(budget): {
      "trainer.num_epochs": budget.epochs,
      "data_loader.batch_sampler.batch_size": budget.batch_size,
    },
  },
};

local elmo_overrides(field, settings) = {
  [field + ".options_file"]: settings.options_file,
  [field + ".weight_file"]: settings.weight_file,
  "model.regularizer": elmo.regularizer(settings.regularization),
} + (
  // The biLM's LSTM layers and its token layer, all but the top one weighted 0.
  if settings.top_layer_only
  then { [field + ".scalar_mix_parameters"]: elmo.top_layer_only(settings.num_layers + 1) }
  else {}
) + (
  // float32 is the embedder's default: left unset, so float32 runs keep their settings.
  if settings.compute_dtype != "float32"
  then { [field + ".compute_dtype"]: settings.compute_dtype }
  else {}
);

function(task, budget=null, elmo=null)
  if budget != null then tasks[task].budget(budget)
  else elmo_overrides(tasks[task].elmo_field, elmo)
