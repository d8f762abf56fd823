// The ELMo blocks every task config imports. A config of your own can import this file too
// (README "Using the plugin from your own project": the `allennlp` command, and Python after
// `import elmo_plugin`, find "elmo_plugin/..." imports in the installed package):
//
//   local elmo = (import "elmo_plugin/training_configs/common/elmo.libsonnet") + {
//     options_file: "/models/elmo_original/options.json",
//     weight_file: "/models/elmo_original/weights.hdf5",
//   };
//   ... "token_embedders": { "elmo": elmo.embedder() + { dropout: 0.2 } } ...
//
// Fields refer to `self`, so overriding `options_file`/`weight_file` reaches every block.
local shipped = "elmo_plugin://pretrained/elmo_wikipedia_512x128";
{
  // The biLM used by default: the project's own, pretrained on Wikipedia
  // (elmo_plugin/pretrained/elmo_wikipedia_512x128/README.md), named so that it resolves from
  // any working directory. Any bilm-tf-format model works: ours from `allennlp elmo-export`,
  // or a published one.
  options_file: shipped + "/options.json",
  weight_file: shipped + "/weights.hdf5",

  // The shipped biLM's options.json inline, by its name: no file is read for them, and
  // `output_dim` knows the size. An `options_file` of another name is read from disk as usual
  // (add `known_options+: { [path]: import path }`, with its literal path, for `output_dim`).
  // Every trained model.tar.gz carries its biLM's options in its vocabulary and its weights,
  // and loads with no biLM file at all (`Elmo`'s `vocab`).
  known_options: { [shipped + "/options.json"]: import "elmo_plugin/pretrained/elmo_wikipedia_512x128/options.json" },

  // The width of the biLM's vectors (2 * its lstm.projection_dim) for the layer that reads
  // them, e.g. `seq2vec_encoder: { type: "boe", embedding_dim: elmo.output_dim }`: taken from
  // `known_options`, which hold the shipped biLM's; for another biLM add its options there
  // (jsonnet imports only literal paths) or write the number.
  output_dim:: if std.objectHas($.known_options, $.options_file)
    then 2 * $.known_options[$.options_file].lstm.projection_dim
    else error ("elmo.output_dim: the elmo block does not know the size of the biLM '"
                + $.options_file + "'. Add its options with the path written out, "
                + "known_options+: { \"" + $.options_file + "\": import \"" + $.options_file
                + "\" }, or write its size, 2 * lstm.projection_dim of that options.json"),

  // The token indexer whose ids the embedder reads.
  indexer: { type: "elmo_characters" },

  // An ELMoForManyLangs model (its folder) instead of a bilm-tf biLM: its own indexer reads
  // the same folder, and the model's files give its sizes:
  //   local elmo = (import "elmo_plugin/training_configs/common/elmo.libsonnet").efml("/m/en");
  efml(model):: self + {
    options_file: model,
    weight_file: null,
    indexer: { type: "elmo_efml_characters", model: model },
    output_dim:: error ("elmo.output_dim: write the size of the ELMoForManyLangs model '" + model
                        + "', 2 * encoder.projection_dim of its architecture JSON"),
  },

  // ELMo's indexer beside a plain "tokens" one whose embedder outputs nothing, for models that
  // read token ids from the text field (AllenNLP's basic_classifier: without them it fails
  // with "Our heuristic for guessing the right token ids failed"):
  //   token_indexers: elmo.indexers,  ...  token_embedders: elmo.embedders(elmo.embedder())
  indexers: { tokens: { type: "single_id" }, elmo: $.indexer },
  embedders(embedder):: { tokens: { type: "empty" }, elmo: embedder },

  // Logs the learned layer weights each epoch for any model (ours report them themselves):
  //   trainer: { ..., callbacks: elmo.callbacks }
  callbacks: [{ type: "elmo_layer_weights" }],

  // Settings shared by the embedder and the Elmo module.
  common_settings:: {
    options_file: $.options_file,
    known_options: $.known_options,
    weight_file: $.weight_file,
  },

  // The `elmo` TokenEmbedder. `cache: true` remembers the frozen biLM's activations per
  // sentence, so epochs after the first run at close to baseline speed, when `cache_mb` holds
  // the training text's activations. `compute_dtype` null leaves the embedder's default
  // (float32); it is the key of the embedder's `execution` setting of that name.
  embedder(num_output_representations=1, requires_grad=false, dropout=0.5,
           do_layer_norm=false, cache=true, scalar_mix_parameters=null,
           compute_dtype=null, cache_mb=4096):: self.common_settings + {
    type: "elmo",
    num_output_representations: num_output_representations,
    requires_grad: requires_grad,
    dropout: dropout,
    do_layer_norm: do_layer_norm,
    [if scalar_mix_parameters != null then "scalar_mix_parameters"]: scalar_mix_parameters,
    [if compute_dtype != null then "compute_dtype"]: compute_dtype,
    [if cache && !requires_grad then "activation_cache"]: { max_memory_mb: cache_mb },
  },

  // The same settings for a model parameter of type `Elmo` (ELMo at a model's input and
  // output: `num_output_representations: 2`).
  module(num_output_representations=2, requires_grad=false, dropout=0.5,
         do_layer_norm=false, cache=true, scalar_mix_parameters=null, compute_dtype=null,
         cache_mb=4096)::
    std.mergePatch(
      self.embedder(num_output_representations, requires_grad, dropout, do_layer_norm, cache,
                    scalar_mix_parameters, compute_dtype, cache_mb),
      { type: null }
    ),

  // Only the top biLM layer (the paper's Table 2 baseline "last only").
  top_layer_only(num_layers=3):: [-9e10 for _ in std.range(1, num_layers - 1)] + [1.0],

  // The parameter names of the learned layer weights (the pre-softmax weights of every scalar
  // mix): elmo_plugin.elmo.modules.elmo.LAYER_WEIGHTS_REGEX, which a test checks this equals.
  layer_weights_regex:: ".*scalar_mixes.*scalar_parameters",

  // The parameter names of the pretrained biLM in any model:
  // elmo_plugin.elmo.formats.weight_provenance.BILM_PARAMETERS_REGEX (a test checks). A model
  // initializer whose regexes could match them must list it in `prevent_regexes`, or it
  // re-initialises the biLM:
  //   initializer: { regexes: [...], prevent_regexes: [elmo.bilm_parameters_regex] }
  bilm_parameters_regex:: "(^|\\.)_bilm\\.",

  // The paper's lambda * ||w||^2 on the layer weights, for a model's `regularizer`:
  //   "regularizer": elmo.regularizer(0.001)
  regularizer(lambda):: {
    regexes: [[$.layer_weights_regex, { type: "l2", alpha: lambda }]],
  },
}
