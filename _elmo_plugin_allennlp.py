"""
Makes a pip-installed elmo_plugin a plugin of the `allennlp` command from any directory.

AllenNLP 2.10 finds plugins only among its DEFAULT_PLUGINS, in `.allennlp_plugins` of the
working directory or in `~/.allennlp/plugins`. The wheel installs `elmo_plugin_allennlp.pth`,
which Python runs at start-up; it calls `install()`, which does nothing unless the process is
the `allennlp` command. There it waits for `allennlp.common.plugins` to be imported, then
adds `elmo_plugin` to its DEFAULT_PLUGINS (so our subcommands and every registered class load,
tasks included, and `elmo_plugin.allennlp_command` checks every archive's members before
extraction). Two things the command prints before any plugin loads go too: the FutureWarnings
AllenNLP's dependencies (fairscale, torch.jit) raise while `allennlp.commands` is imported,
silenced for that import only (as `elmo_plugin.plugin` does for its own imports), and, under
`predict --silent`, the INFO lines of loading the plugins. Importing `elmo_plugin` lets jsonnet
configs `import "elmo_plugin/training_configs/..."` from the installed package
(`elmo_plugin.config_imports`).
"""

import importlib.abc
import importlib.util
import os
import sys
import warnings

PLUGIN = "elmo_plugin"
# What the plugin changes in the command: archives' members checked before extraction.
COMMAND_HOOKS = "elmo_plugin.allennlp_command"
_PLUGINS = "allennlp.common.plugins"
_COMMANDS = "allennlp.commands"


def _runs_allennlp(argv) -> bool:
    return _command(argv) is not None


def _command(argv):
    """The arguments after the `allennlp` command in `argv` (a list, maybe empty), or None when
    the process is not the `allennlp` command."""
    if len(argv) > 1 and os.path.basename(argv[1]) == "allennlp":
        return argv[2:]
    if argv[1:3] == ["-m", "allennlp"]:
        return argv[3:]
    return None


def _silent_predict(argv) -> bool:
    arguments = _command(argv) or []
    return arguments[:1] == ["predict"] and "--silent" in arguments


def install() -> None:
    argv = getattr(sys, "orig_argv", sys.argv)
    if _runs_allennlp(argv):
        sys.meta_path.insert(0, _AfterImport(_COMMANDS, before=_without_future_warnings))
        after = _register_quietly if _silent_predict(argv) else _register
        sys.meta_path.insert(0, _AfterImport(_PLUGINS, after=after))


def _without_future_warnings(execute, module) -> None:
    """Runs a module's code with its dependencies' FutureWarnings silenced, for its import
    only (the filters are restored when it returns)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        execute(module)


def _register(plugins) -> None:
    for name in (PLUGIN, COMMAND_HOOKS):
        if name not in plugins.DEFAULT_PLUGINS:
            plugins.DEFAULT_PLUGINS = (*plugins.DEFAULT_PLUGINS, name)


def _register_quietly(plugins) -> None:
    """`_register`, in `predict --silent`: AllenNLP has set up logging (`allennlp.__main__`)
    but not loaded the plugins, whose INFO lines `--silent` does not want; the same level
    `elmo_plugin.command_checks` sets once the command runs."""
    # Imported here, not at the top: this module runs at every Python start-up (the .pth).
    import logging

    logging.getLogger().setLevel(logging.WARNING)
    _register(plugins)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Watches for the import of the module `watched`: runs its code through `before` (given
    the module's own `exec_module` and the module), then calls `after` with the module."""

    def __init__(self, watched, before=None, after=None) -> None:
        self.watched = watched
        self.before = before or (lambda execute, module: execute(module))
        self.after = after or (lambda module: None)

    def find_spec(self, name, path, target=None):
        if name != self.watched:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        # allennlp is being imported, so its module has a spec with a loader.
        assert spec is not None and spec.loader is not None
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module) -> None:
            self.before(execute, module)
            self.after(module)

        # This one loader's method is wrapped on purpose (mypy forbids assigning to a method).
        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
