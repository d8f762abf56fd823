"""
elmo_plugin: ELMo (Peters et al. 2018) as an AllenNLP plugin.

Importing the package registers everything: the ELMo core, the pretraining pieces, every
task (so `Predictor.from_path` loads a task archive after `import elmo_plugin`) and the
`allennlp` subcommands (`elmo-embed`, `elmo-export`). It changes nothing else in the process.

`ElmoEmbedder` gives sentences' ELMo layers as numpy arrays, with AllenNLP 0.9's API.
"""

from elmo_plugin.version import VERSION as __version__
import elmo_plugin.elmo  # noqa: F401
import elmo_plugin.lm  # noqa: F401
import elmo_plugin.tasks  # noqa: F401
import elmo_plugin.training  # noqa: F401
import elmo_plugin.commands  # noqa: F401
from elmo_plugin.elmo_embedder import ElmoEmbedder

__all__ = ["__version__", "ElmoEmbedder"]
