"""
What `elmo_plugin` changes in the `allennlp` command when the command loads it as a plugin:
the `COMMAND` rows of `elmo_plugin.allennlp.framework` (every archive's members checked before
extraction, `model.tar.gz` written whole, a missing CUDA device named by its flag or key, a
user's error on one line), and `predict --silent` logs only warnings and errors.

`elmo_plugin.allennlp` imports this module when the process is the `allennlp` command (which
loads the plugin through a plugins file naming `elmo_plugin` or `--include-package
elmo_plugin`); elsewhere nothing imports it.
"""

import sys

from elmo_plugin.allennlp.command_checks import quiet_when_silent
from elmo_plugin.allennlp.framework import COMMAND, install

install(COMMAND)
quiet_when_silent(sys.argv)
