"""
elmo_plugin: ELMo (Peters et al. 2018) as an AllenNLP plugin.

Importing the package registers the ELMo core, the pretraining pieces and the `allennlp`
subcommands (`elmo-embed`, `elmo-export`); `--include-package elmo_plugin` also registers
every task.
"""
from elmo_plugin.version import VERSION as __version__
import elmo_plugin.elmo  # noqa: F401
import elmo_plugin.lm  # noqa: F401
import elmo_plugin.training  # noqa: F401
import elmo_plugin.commands  # noqa: F401
