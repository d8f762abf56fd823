"""
elmo_plugin: ELMo (Peters et al. 2018), its core free of AllenNLP and an AllenNLP plugin on top.

`import elmo_plugin` gives the core's Python API with or without AllenNLP: `ElmoEmbedder`
(AllenNLP 0.9's API: sentences' ELMo layers as numpy arrays), `Elmo`, `batch_to_ids` and the
biLM loaders (`elmo_plugin.elmo`). Where AllenNLP is installed it also registers the plugin:
the `elmo` token embedder, the `bilm` model, every task (so `Predictor.from_path` loads a task
archive after `import elmo_plugin`), the `allennlp` subcommands (`elmo-embed`, `elmo-export`,
`elmo-perplexity`), and lets AllenNLP's jsonnet evaluation find `import
"elmo_plugin/training_configs/..."` in the installed package (`elmo_plugin.plugin`). It changes
nothing else in the process.

Errors, one rule: whatever a user gives us and must fix is a `ConfigurationError`
(`elmo_plugin.elmo.errors`, the core's: the AllenNLP layer raises it too) naming what is wrong
and where (the config key or flag; the file and line or record; the input's key) and, where it
helps, the fix: a config, a command's flags, the data files a config or command names and every
record in them, a predictor's input, the arguments of `ElmoEmbedder`. A `ValueError` is left to
helpers that cannot know where their input came from (the reader or predictor calling them turns
it into a `ConfigurationError` naming the place) and to a broken precondition between our own
functions (a metric, a decoder, a tensor's layout): a bug, not bad input.
"""

from elmo_plugin.version import VERSION as __version__
from elmo_plugin.elmo import ConfigurationError, Elmo, batch_to_ids, load_bilm
from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder

try:
    import allennlp  # noqa: F401
except ModuleNotFoundError as error:  # the core alone: no plugin to register
    if error.name != "allennlp":
        raise
else:
    import elmo_plugin.plugin  # noqa: F401

__all__ = ["__version__", "ConfigurationError", "Elmo", "ElmoEmbedder", "batch_to_ids", "load_bilm"]
