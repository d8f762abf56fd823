"""
elmo_plugin: ELMo (Peters et al. 2018), its core free of AllenNLP and an AllenNLP plugin on top.

Three wings, one per audience: `elmo_plugin.elmo` (the core, for torch users: `Elmo`,
`batch_to_ids`, the biLM loaders), `elmo_plugin.embedding` (numpy and the command line:
`ElmoEmbedder`, AllenNLP 0.9's API, and `elmo-embed`) and `elmo_plugin.allennlp` (the AllenNLP
plugin, for config users). `import elmo_plugin` gives the first two and never imports AllenNLP
by itself, so the command line starts fast: where AllenNLP is already imported it also
registers the plugin (`elmo_plugin.allennlp`), as it is when AllenNLP loads it
(`--include-package elmo_plugin` or a plugins file); a script that imports `elmo_plugin` first
imports `elmo_plugin.allennlp` to register it. It changes nothing else in the process.

Errors, one rule: whatever a user gives us and must fix is a `ConfigurationError`
(`elmo_plugin.elmo.errors`, the core's: the AllenNLP layer raises it too) naming what is wrong
and where (the config key or flag; the file and line or record; the input's key) and, where it
helps, the fix: a config, a command's flags, the data files a config or command names and every
record in them, a predictor's input, the arguments of `ElmoEmbedder`. A `ValueError` is left to
helpers that cannot know where their input came from (the reader or predictor calling them turns
it into a `ConfigurationError` naming the place) and to a broken precondition between our own
functions (a metric, a decoder, a tensor's layout): a bug, not bad input.
"""

import sys

from elmo_plugin.version import VERSION as __version__
from elmo_plugin.elmo import ConfigurationError, Elmo, batch_to_ids, load_bilm
from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder

if "allennlp" in sys.modules:
    import elmo_plugin.allennlp  # noqa: F401

__all__ = ["__version__", "ConfigurationError", "Elmo", "ElmoEmbedder", "batch_to_ids", "load_bilm"]
