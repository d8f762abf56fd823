"""
Every function of AllenNLP (and of the libraries it calls) that elmo_plugin replaces, in one
table: what is replaced, when, why, and the version it is written for. Nothing else of ours
assigns to a framework module; `tests/test_framework_replacements.py` checks that importing the
plugin changes exactly the `CONFIG_LOADER` rows and that the `allennlp` command changes exactly
the `COMMAND` rows.

When each row is installed:
- `CONFIG_LOADER`: on `import elmo_plugin.allennlp` (which registers our classes), because
  users expect `import "elmo_plugin/..."` in their own jsonnet and `elmo_plugin://` config
  names to resolve once the plugin is imported, from Python as from the command.
- `COMMAND`: only in the `allennlp` command (`runs_allennlp`), when it loads the plugin (a
  plugins file naming `elmo_plugin`, or `--include-package elmo_plugin`).
- `MODEL_METRICS` (`add_metrics`): on one model object, by the `elmo_layer_weights` callback.

Each row wraps or replaces a public name (no private one), idempotently.
"""

import os
import sys
from typing import Any, Callable, Dict, List, NamedTuple, Tuple

WRITTEN_FOR = "allennlp 2.10.1, cached-path 1.x"

CONFIG_LOADER = "on import of elmo_plugin.allennlp"
COMMAND = "in the allennlp command, when it loads the plugin"
_MARK = "_elmo_plugin_replaces"


class Replacement(NamedTuple):
    module: str
    name: str
    when: str
    why: str
    # Builds the replacement from the function it replaces.
    replace: Callable[[Any], Any]


def _config_imports(name: str) -> Callable[[Any], Any]:
    def replace(original: Any) -> Any:
        from elmo_plugin.allennlp import config_imports

        return getattr(config_imports, name)(original)

    return replace


def _archives(name: str) -> Callable[[Any], Any]:
    def replace(original: Any) -> Any:
        from elmo_plugin.allennlp import archives

        return getattr(archives, name)

    return replace


def _archives_wrapping(name: str) -> Callable[[Any], Any]:
    def replace(original: Any) -> Any:
        from elmo_plugin.allennlp import archives

        return getattr(archives, name)(original)

    return replace


def _checks(name: str) -> Callable[[Any], Any]:
    def replace(original: Any) -> Any:
        from elmo_plugin.allennlp import command_checks

        return getattr(command_checks, name)(original)

    return replace


def _trainer_checks(original: Any) -> Any:
    from elmo_plugin.allennlp import command_checks, config_keys, unsaved_runs

    removing = unsaved_runs.removing_unsaved_run(original)
    return command_checks.checking_trainer_devices(config_keys.checking_config_keys(removing))


def _config_keys(name: str) -> Callable[[Any], Any]:
    def replace(original: Any) -> Any:
        from elmo_plugin.allennlp import config_keys

        return getattr(config_keys, name)(original)

    return replace


REPLACEMENTS: Tuple[Replacement, ...] = (
    Replacement(
        "allennlp.common.params",
        "evaluate_file",
        CONFIG_LOADER,
        'AllenNLP passes jsonnet no import callback, so `import "elmo_plugin/..."` cannot find '
        "the installed package's blocks; ours passes one that looks where jsonnet looks, then "
        "in the package, and sets the ELMO_PLUGIN_DATA external variable.",
        _config_imports("with_package_imports"),
    ),
    Replacement(
        "allennlp.common.params",
        "evaluate_snippet",
        CONFIG_LOADER,
        "the same for overrides (`-o`), which AllenNLP evaluates as a snippet.",
        _config_imports("with_package_imports"),
    ),
    Replacement(
        "allennlp.common.params",
        "cached_path",
        CONFIG_LOADER,
        "`Params.from_file` resolves its file name with it, which knows no `elmo_plugin://` "
        "names; ours maps those to the packaged config and hands every other name on.",
        _config_imports("with_package_configs"),
    ),
    Replacement(
        "allennlp.models.archival",
        "extracted_archive",
        COMMAND,
        "`load_archive` extracts with `tarfile.extractall` and no filter: a member `../x` or an "
        "absolute link writes outside the folder; ours checks every member first.",
        _archives("checked_extracted_archive"),
    ),
    Replacement(
        "cached_path._cached_path",
        "check_tarfile",
        COMMAND,
        "its prefix comparison lets `../pathtest-x` through when `x.tar.gz!member` paths and "
        "vocabularies are extracted; ours applies the same member check.",
        _archives("check_tar_file"),
    ),
    Replacement(
        "allennlp.nn.util",
        "read_state_dict",
        COMMAND,
        "it unpickles a weights file in full, which on torch 1.12 (no `weights_only`) runs any "
        "code the pickle names, also from a serialization directory; ours reads it with only "
        "tensors and state dicts allowed first.",
        _archives_wrapping("checking_state_dicts"),
    ),
    Replacement(
        "allennlp.commands.train",
        "archive_model",
        COMMAND,
        "it writes `model.tar.gz` in place, so a kill leaves a truncated archive that loads as "
        "corrupt; ours writes a temporary file renamed once complete.",
        _archives("archive_model_whole"),
    ),
    Replacement(
        "allennlp.commands.predict",
        "check_for_gpu",
        COMMAND,
        "a missing CUDA device is reported as a config key to override; ours names the "
        "`--cuda-device` flag, and under `predict --silent` the INFO lines of loading stay off.",
        _checks("checking_predict_device"),
    ),
    Replacement(
        "allennlp.commands.evaluate",
        "evaluate_from_archive",
        COMMAND,
        "as for predict: a missing CUDA device named by its flag before the archive loads.",
        _checks("checking_evaluation_device"),
    ),
    Replacement(
        "allennlp.commands.train",
        "train_model",
        COMMAND,
        "a missing CUDA device in `trainer.cuda_device` or `distributed.cuda_devices` named by "
        "its key before any data is read, not after minutes of vocabulary building; so is a "
        "key no class takes (`config_keys`); and a run that fails before saving anything "
        "leaves no serialization folder, which would make the same command, fixed, fail with "
        "'already exists' (`unsaved_runs`).",
        _trainer_checks,
    ),
    Replacement(
        "allennlp.common.from_params",
        "create_kwargs",
        COMMAND,
        "a key a class does not take is passed to a constructor taking `**kwargs`, where it "
        "ends in a `TypeError` under a long traceback, or is dropped (the trainer's "
        "`from_partial_objects`); ours refuses it first, naming the class and its keys.",
        _config_keys("checking_constructor_keys"),
    ),
    Replacement(
        "allennlp.common.params",
        "with_overrides",
        COMMAND,
        "an override (`-o`) that adds a key to a section is merged whatever the key, so a typo "
        "such as `trainer.num_epoch` is ignored; ours refuses a key that names nothing the "
        "config's classes take, with the nearest keys, before any data is read.",
        _config_keys("checking_override_keys"),
    ),
    Replacement(
        "sys",
        "excepthook",
        COMMAND,
        "a user's error (a `ConfigurationError`) ends the command with its message on one line "
        "instead of tracebacks of our code; `ALLENNLP_DEBUG=1` shows them.",
        _checks("one_line_errors"),
    ),
)


def runs_allennlp(argv: List[str]) -> bool:
    """Whether the process is the `allennlp` command (its script, or `python -m allennlp`)."""
    script = argv[0] if argv else ""
    return os.path.basename(script) == "allennlp" or script.endswith(
        os.path.join("allennlp", "__main__.py")
    )


def install(when: str) -> None:
    """Installs the rows of `REPLACEMENTS` installed `when` (idempotent)."""
    for row in REPLACEMENTS:
        if row.when == when:
            _install(row)


def _install(row: Replacement) -> None:
    module = sys.modules.get(row.module) or _import(row.module)
    if module is None:
        return
    original = getattr(module, row.name)
    if getattr(original, _MARK, None) == row.name:
        return
    replacement = row.replace(original)
    setattr(replacement, _MARK, row.name)
    setattr(module, row.name, replacement)


def _import(name: str) -> Any:
    import importlib
    import logging

    try:
        return importlib.import_module(name)
    except ImportError:  # another layout of an optional library: its own behaviour stays
        logging.getLogger(__name__).warning("%s is not replaced (unknown version)", name)
        return None


def add_metrics(model: Any, extra: Callable[[Any], Dict[str, float]]) -> None:
    """`MODEL_METRICS`: makes `model.get_metrics` also return `extra(model)`'s metrics for
    names the model does not report, on this one model object (an instance attribute over its
    class's method), for as long as it lives.

    Why: AllenNLP's trainer (2.10.1) takes every metric it reports from `model.get_metrics`
    (progress bar, `on_batch`, each epoch's metrics, `metrics_epoch_<n>.json`, `metrics.json`,
    the `best_validation_*` copies); the callback hooks that see metrics come too late for some
    of these (`on_epoch` runs after `metrics_epoch_<n>.json` is written), so only the model's
    own method puts a metric everywhere the model's metrics go."""
    model_metrics = model.get_metrics

    def get_metrics(reset: bool = False) -> Dict[str, float]:
        metrics = model_metrics(reset)
        for name, value in extra(model).items():
            metrics.setdefault(name, value)
        return metrics

    model.get_metrics = get_metrics
