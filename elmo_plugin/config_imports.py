"""
Lets jsonnet configs anywhere `import "elmo_plugin/training_configs/..."`: our config blocks and
task configs, resolved inside the installed package, from Python (`Params.from_file`,
`train_model_from_file`, a notebook) as in the `allennlp` command; and lets a packaged config be
named as `elmo_plugin://training_configs/<task>/<config>.jsonnet` wherever AllenNLP takes a
config file (`allennlp train elmo_plugin://training_configs/ner/ner_elmo.jsonnet ...`).

Why a wrapper, and why on `import elmo_plugin`: AllenNLP evaluates configs with `_jsonnet`'s
`evaluate_file`, which finds an import next to the importing file or in the `jpathdir`
directories its caller names; AllenNLP names none, reads no setting that would add one (the
jsonnet binding ignores `JSONNET_PATH`) and offers no import callback. So the one place to add
a directory is the `evaluate_file` (and `evaluate_snippet`, for overrides) that
`allennlp.common.params` calls: `enable_config_imports` wraps those two names in that module to
pass the directory holding the installed `elmo_plugin` as a library directory, with the
lowest priority. That changes jsonnet evaluation and nothing else of the process (no
environment variable, import hook, `sys.path` or logging), and within it only imports that
would have failed: jsonnet tries the importing file's directory first, so every config that
loaded before loads the same. `import elmo_plugin` calls it, as the issue's users expect blocks
to resolve after the one import that registers them; it is idempotent.

The same way, `Params.from_file` passes its file name to the `cached_path` of that module, which
knows no `elmo_plugin://` names: the wrapper maps those to the file in the installed package
and hands every other name on unchanged.
"""

import functools
import glob
import os
from typing import Any, Callable, List, Union

from allennlp.common import params

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.package_files import SCHEME, package_path

# The directory holding the `elmo_plugin` package (site-packages, or the clone's root).
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_EVALUATORS = ("evaluate_file", "evaluate_snippet")
_MARK = "_elmo_plugin_library_dir"
_CONFIGS = "training_configs"


def enable_config_imports() -> None:
    """Makes AllenNLP's jsonnet evaluation find `elmo_plugin/...` imports in the installed
    package when they are not next to the importing file (see the module's docstring)."""
    for name in _EVALUATORS:
        evaluate = getattr(params, name)
        if not getattr(evaluate, _MARK, False):
            setattr(params, name, _with_package_library_dir(evaluate))
    if not getattr(params.cached_path, _MARK, False):
        params.cached_path = _with_package_configs(params.cached_path)


def _with_package_library_dir(evaluate: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(evaluate)
    def evaluate_with_package(*args: Any, **kwargs: Any) -> str:
        kwargs["jpathdir"] = _library_dirs(kwargs.get("jpathdir"))
        return evaluate(*args, **kwargs)

    setattr(evaluate_with_package, _MARK, True)
    return evaluate_with_package


def _library_dirs(given: Union[None, str, List[str]]) -> Union[str, List[str]]:
    """The caller's library directories after ours: jsonnet's right-most one wins."""
    if given is None:
        return PACKAGE_PARENT
    return [PACKAGE_PARENT] + ([given] if isinstance(given, str) else list(given))


def _with_package_configs(cached_path: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(cached_path)
    def cached_path_with_package_configs(url_or_filename: Any, *args: Any, **kwargs: Any) -> str:
        name = os.fspath(url_or_filename)
        if isinstance(name, str) and name.startswith(SCHEME):
            return package_config(name)
        return cached_path(url_or_filename, *args, **kwargs)

    setattr(cached_path_with_package_configs, _MARK, True)
    return cached_path_with_package_configs


def package_config(name: str) -> str:
    """The local path of the packaged config `elmo_plugin://training_configs/...`; another
    name is an error that lists the task configs."""
    relative = name[len(SCHEME) :]
    local = package_path(relative)
    if relative.startswith(_CONFIGS + "/") and os.path.isfile(local):
        return local
    configs = sorted(
        os.path.relpath(path, package_path(""))
        for path in glob.glob(os.path.join(package_path(_CONFIGS), "*", "*.jsonnet"))
    )
    raise ConfigurationError(
        f"{name}: no such packaged config; the task configs are "
        + ", ".join(f"{SCHEME}{config}" for config in configs)
    )
