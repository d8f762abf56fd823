"""
elmo_plugin: ELMo (Peters et al. 2018) as an AllenNLP plugin.

Importing the package registers everything: the ELMo core, the pretraining pieces, every
task (so `Predictor.from_path` loads a task archive after `import elmo_plugin`) and the
`allennlp` subcommands (`elmo-embed`, `elmo-export`), and lets AllenNLP's jsonnet evaluation
find `import "elmo_plugin/training_configs/..."` in the installed package
(`elmo_plugin.config_imports` says how and why). It changes nothing else in the process.

`ElmoEmbedder` gives sentences' ELMo layers as numpy arrays, with AllenNLP 0.9's API.

Errors, one rule: whatever a user gives us and must fix is a `ConfigurationError` naming what
is wrong and where (the config key or flag; the file and line or record; the input's key) and,
where it helps, the fix: a config, a command's flags, the data files a config or command
names and every record in them, a predictor's input, the arguments of `ElmoEmbedder`. A
`ValueError` is left to helpers that cannot know where their input came from (the reader or
predictor calling them turns it into a `ConfigurationError` naming the place) and to a broken
precondition between our own functions (a metric, a decoder, a tensor's layout): a bug, not
bad input.
"""

from elmo_plugin.version import VERSION as __version__
import elmo_plugin.elmo  # noqa: F401
import elmo_plugin.lm  # noqa: F401
import elmo_plugin.tasks  # noqa: F401
import elmo_plugin.training  # noqa: F401
import elmo_plugin.commands  # noqa: F401
from elmo_plugin.elmo_embedder import ElmoEmbedder
from elmo_plugin.config_imports import enable_config_imports

enable_config_imports()

__all__ = ["__version__", "ElmoEmbedder"]
