"""
Makes a pip-installed elmo_plugin a plugin of the `allennlp` command from any directory.

AllenNLP 2.10 finds plugins only among its DEFAULT_PLUGINS, in `.allennlp_plugins` of the
working directory or in `~/.allennlp/plugins`. The wheel installs `elmo_plugin_allennlp.pth`,
which Python runs at start-up; it calls `install()`, which does nothing unless the process is
the `allennlp` command. There it waits for `allennlp.common.plugins` to be imported, then
adds `elmo_plugin` to its DEFAULT_PLUGINS (so our subcommands and every registered class load,
tasks included, and `elmo_plugin.allennlp_command` checks every archive's members before
extraction). Importing `elmo_plugin` lets jsonnet configs `import
"elmo_plugin/training_configs/..."` from the installed package (`elmo_plugin.config_imports`).
"""
import importlib.abc
import importlib.util
import os
import sys

PLUGIN = "elmo_plugin"
# What the plugin changes in the command: archives' members checked before extraction.
COMMAND_HOOKS = "elmo_plugin.allennlp_command"
_WATCHED = "allennlp.common.plugins"


def _runs_allennlp(argv) -> bool:
    return (len(argv) > 1 and os.path.basename(argv[1]) == "allennlp") or argv[1:3] == [
        "-m",
        "allennlp",
    ]


def install() -> None:
    if _runs_allennlp(getattr(sys, "orig_argv", sys.argv)):
        sys.meta_path.insert(0, _AfterPluginsImport())


def _register(plugins) -> None:
    for name in (PLUGIN, COMMAND_HOOKS):
        if name not in plugins.DEFAULT_PLUGINS:
            plugins.DEFAULT_PLUGINS = (*plugins.DEFAULT_PLUGINS, name)


class _AfterPluginsImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _WATCHED:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        # allennlp is being imported, so its module has a spec with a loader.
        assert spec is not None and spec.loader is not None
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module) -> None:
            execute(module)
            _register(module)

        # This one loader's method is wrapped on purpose (mypy forbids assigning to a method).
        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
