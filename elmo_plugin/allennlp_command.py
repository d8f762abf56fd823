"""
What `elmo_plugin` changes in the `allennlp` command when the command loads it as a plugin
(`elmo_plugin.archives`): every archive the command loads (`predict`, `evaluate`,
`elmo-embed --archive`, `_pretrained` modules, ...) has its members checked before extraction,
and `train` writes `model.tar.gz` to a temporary name renamed once complete; a CUDA device
that is not there is one error naming its flag or key, and `predict --silent` logs only
warnings and errors, and a user's error (a `ConfigurationError`) is one line on stderr
(`elmo_plugin.command_checks`).

The command imports this module through our start-up hook (the wheel's
`elmo_plugin_allennlp.pth` adds it to AllenNLP's default plugins), through
`.allennlp_plugins` in the clone's root, and through `--include-package elmo_plugin` (which
imports every submodule). `import elmo_plugin` does not import it.
"""

from elmo_plugin.archives import install_archive_check, install_whole_archives
from elmo_plugin.command_checks import (
    install_cuda_device_checks,
    install_one_line_errors,
    install_silent_predict,
)

install_archive_check()
install_whole_archives()
install_cuda_device_checks()
install_silent_predict()
install_one_line_errors()
