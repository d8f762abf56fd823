"""
The AllenNLP plugin, registered on import: every registered class (the `elmo` token embedder,
the callbacks and trainers, the `bilm` model and its pieces, the tasks) and the `allennlp`
subcommands, and jsonnet's `import "elmo_plugin/training_configs/..."` resolved in the installed
package (`elmo_plugin.config_imports`). `import elmo_plugin` imports it where AllenNLP is
installed; `allennlp ... --include-package elmo_plugin` does the same.
"""

import warnings

# AllenNLP's dependencies warn on import about their own deprecations (FutureWarnings from
# transformers and torch's older APIs), which no user of elmo_plugin can act on: silenced for
# this import only, the process's warning filters left as they were.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    import elmo_plugin.modules  # noqa: F401
    import elmo_plugin.training  # noqa: F401
    import elmo_plugin.lm  # noqa: F401
    import elmo_plugin.tasks  # noqa: F401
    import elmo_plugin.commands  # noqa: F401

from elmo_plugin.config_imports import enable_config_imports  # noqa: E402

enable_config_imports()
