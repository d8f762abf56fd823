"""
The AllenNLP plugin: importing this package registers every class of ours (the `elmo` token
embedder and indexers, the callbacks and trainers, the `bilm` model and its pieces, the tasks)
and the `allennlp` subcommands, and makes AllenNLP's config loader resolve `import
"elmo_plugin/..."` in jsonnet and `elmo_plugin://` config names in the installed package (the
`CONFIG_LOADER` rows of `elmo_plugin.allennlp.framework`, the only change it makes to AllenNLP
in a process that is not the `allennlp` command; in the command it also makes the `COMMAND`
ones, `elmo_plugin.allennlp.command`).

AllenNLP imports it through `--include-package elmo_plugin` or a plugins file naming
`elmo_plugin`; `import elmo_plugin` imports it when AllenNLP is already imported; a script that
imports `elmo_plugin` before AllenNLP imports this package itself.
"""

import sys
import warnings

# AllenNLP's dependencies warn on import about their own deprecations (FutureWarnings from
# transformers and torch's older APIs), which no user of elmo_plugin can act on: silenced for
# this import only, the process's warning filters left as they were.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    import elmo_plugin.allennlp.modules  # noqa: F401
    import elmo_plugin.allennlp.training  # noqa: F401
    import elmo_plugin.allennlp.lm  # noqa: F401
    import elmo_plugin.allennlp.tasks  # noqa: F401
    import elmo_plugin.allennlp.commands  # noqa: F401

from elmo_plugin.allennlp.framework import CONFIG_LOADER, install, runs_allennlp  # noqa: E402

install(CONFIG_LOADER)
if runs_allennlp(sys.argv):
    import elmo_plugin.allennlp.command  # noqa: F401,E402
