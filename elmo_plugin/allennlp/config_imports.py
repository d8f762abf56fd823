"""
Lets jsonnet configs anywhere `import "elmo_plugin/..."`: our config blocks and task configs
(`elmo_plugin/training_configs/...`) and the shipped biLM's files, resolved inside the installed
package, from Python (`Params.from_file`, `train_model_from_file`, a notebook) as in the
`allennlp` command; and lets a packaged config be named as
`elmo_plugin://training_configs/<task>/<config>.jsonnet` wherever AllenNLP takes a config file
(`allennlp train elmo_plugin://training_configs/ner/ner_elmo.jsonnet ...`).

Why a wrapper, and why on `import elmo_plugin`: AllenNLP evaluates configs with `_jsonnet`'s
`evaluate_file`, which finds an import next to the importing file or in the `jpathdir`
directories its caller names; AllenNLP names none, reads no setting that would add one (the
jsonnet binding ignores `JSONNET_PATH`) and passes no import callback. A library directory
cannot serve: the configs are the clone's top-level `training_configs/`, installed as the
package `elmo_plugin.training_configs` (setup.py), so in a clone or an editable install no
folder holds `elmo_plugin/training_configs/`. So `with_package_imports` wraps the
`evaluate_file` and `evaluate_snippet` (for overrides) that `allennlp.common.params` calls to
pass an import callback that looks where jsonnet looks, in jsonnet's order (the importing
file's directory, then the caller's library directories, right-most first), and only then in
the package. That changes jsonnet evaluation and nothing else of the process (no environment
variable, import hook, `sys.path` or logging), and within it only imports that would have
failed, so every config that loaded before loads the same; it also gives the external variable
`ELMO_PLUGIN_DATA` that the packaged configs' data paths read (`elmo_plugin.allennlp.data_paths`).
`import elmo_plugin.allennlp` installs it (`elmo_plugin.allennlp.framework`), as users expect
blocks to resolve after the one import that registers them.

The same way, `Params.from_file` passes its file name to the `cached_path` of that module, which
knows no `elmo_plugin://` names: the wrapper maps those to the file in the installed package
and hands every other name on unchanged.
"""

import functools
import glob
import os
from typing import Any, Callable, List, Optional, Tuple, Union

from elmo_plugin.allennlp.data_paths import with_data_variable
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import (
    CONFIGS,
    PACKAGE,
    SCHEME,
    configs_directory,
    package_path,
)

_PACKAGE_IMPORT = PACKAGE + "/"


def with_package_imports(evaluate: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(evaluate)
    def evaluate_with_package(*args: Any, **kwargs: Any) -> str:
        if kwargs.get("import_callback") is None:
            library_dirs = _as_list(kwargs.pop("jpathdir", None))
            kwargs["import_callback"] = functools.partial(import_file, library_dirs=library_dirs)
        kwargs["ext_vars"] = with_data_variable(kwargs.get("ext_vars"))
        return evaluate(*args, **kwargs)

    return evaluate_with_package


def _as_list(jpathdir: Union[None, str, List[str]]) -> List[str]:
    if jpathdir is None:
        return []
    return [jpathdir] if isinstance(jpathdir, str) else list(jpathdir)


def import_file(directory: str, name: str, library_dirs: List[str]) -> Tuple[str, bytes]:
    """jsonnet's import callback: the path and bytes of the file `name` imported from a file in
    `directory`, found as jsonnet finds it, then (`elmo_plugin/...`) in the installed package."""
    for path in _candidates(directory, name, library_dirs):
        if os.path.isfile(path):
            with open(path, "rb") as file:
                return path, file.read()
    raise RuntimeError(f"no match locally, in the library directories or in {PACKAGE}")


def _candidates(directory: str, name: str, library_dirs: List[str]) -> List[str]:
    if os.path.isabs(name):
        return [name]
    found = [os.path.join(directory, name)]
    found += [os.path.join(library, name) for library in reversed(library_dirs)]
    packaged = _packaged(name)
    return found + ([packaged] if packaged else [])


def _packaged(name: str) -> Optional[str]:
    if not name.startswith(_PACKAGE_IMPORT):
        return None
    try:
        return package_path(name[len(_PACKAGE_IMPORT) :])
    except ConfigurationError:
        return None


def with_package_configs(cached_path: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(cached_path)
    def cached_path_with_package_configs(url_or_filename: Any, *args: Any, **kwargs: Any) -> str:
        name = os.fspath(url_or_filename)
        if isinstance(name, str) and name.startswith(SCHEME):
            return package_config(name)
        return cached_path(url_or_filename, *args, **kwargs)

    return cached_path_with_package_configs


def package_config(name: str) -> str:
    """The local path of the packaged config `elmo_plugin://training_configs/...`; another
    name, or one that leaves the configs, is an error that lists the task configs."""
    relative = name[len(SCHEME) :]
    local = os.path.realpath(package_path(relative))
    configs = os.path.realpath(configs_directory())
    if local.startswith(configs + os.sep) and os.path.isfile(local):
        return local
    known = sorted(
        os.path.relpath(path, configs)
        for path in glob.glob(os.path.join(configs, "*", "*.jsonnet"))
    )
    raise ConfigurationError(
        f"{name}: no such packaged config; the task configs are "
        + ", ".join(f"{SCHEME}{CONFIGS}/{config}" for config in known)
    )
