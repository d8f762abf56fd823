"""
A run's effective config: its config file as AllenNLP trains it, i.e. evaluated by jsonnet
(with the run's hidden fields set by a wrapper around it, see `wrapper_text`) and with its
AllenNLP overrides applied, as `allennlp train CONFIG -o OVERRIDES` does (`Params.from_file`).
Its digest is a run's identity: a finished run's record is read back while the run's effective
config is the one recorded (experiments/records.py), whatever the way the run names its
settings (overrides, hidden fields).

A record keeps its effective config as the evaluation of its config file (`base`, kept once per
scores file) and the run's changes to it (`config_changes`); `differences` names what differs
between two configs, so a run that trains again says why.
"""

import functools
import glob
import hashlib
import json
import os
from typing import Any, Callable, Dict, List, Sequence, Tuple

import elmo_plugin.allennlp  # noqa: F401  (its configs' `elmo_plugin/...` imports resolve)
from allennlp.common import params
from elmo_plugin.allennlp.data_paths import DATA_VARIABLE
from elmo_plugin.elmo.formats.naming.package_files import configs_directory

from experiments.samples import SAMPLE_FILE

Config = Dict[str, Any]
CONFIGS = configs_directory()
# The runs read the fixed splits of ../shared/data (its README, section 8), named to the packaged
# configs (training_configs/common/data.libsonnet) here and in their training's environment,
# whatever the user's own ELMO_PLUGIN_DATA: it gives the data paths, and so the records' digests,
# that the configs held when they wrote ../shared/data themselves.
DATA = "../shared/data"
DATA_VARIABLES = {DATA_VARIABLE: DATA}


def sample_by_name(config: Config) -> Config:
    """A training sample of sample_efficiency's (experiments/samples.py) is named by its file
    name, whatever the dir the job wrote it to: the name fixes its sentences."""
    path = config.get("train_data_path")
    if isinstance(path, str) and SAMPLE_FILE.fullmatch(os.path.basename(path)):
        config = {**config, "train_data_path": os.path.basename(path)}
    return config


def exact_resume_as_trainer(config: Config) -> Config:
    """Exact resume moved from the `exact_resume` callback to the trainer (`trainer.type`
    "exact_resume_gradient_descent", or "sparse_gradient_descent" built on it): an uninterrupted
    run trains the same weights and metrics either way (tests/training/test_exact_resume.py), so
    a config with the callback reads as the one with the trainer."""
    trainer = config.get("trainer")
    if not isinstance(trainer, dict):
        return config
    callbacks = trainer.get("callbacks") or []
    if {"type": "exact_resume"} not in callbacks:
        return config
    trainer = dict(trainer)
    rest = [callback for callback in callbacks if callback != {"type": "exact_resume"}]
    if rest:
        trainer["callbacks"] = rest
    else:
        del trainer["callbacks"]
    if trainer.get("type", "gradient_descent") == "gradient_descent":
        trainer["type"] = "exact_resume_gradient_descent"
    return {**config, "trainer": trainer}


# Rewrites of an effective config, each named with its reason, applied before two configs are
# compared: differences that train the same model (a sample's dir; a change of the shipped
# configs that keeps what they train), so that a record made before them still reads back.
EQUIVALENT_CHANGES: List[Tuple[str, Callable[[Config], Config]]] = [
    ("a sample of the training data is named by its file name", sample_by_name),
    ("exact resume is the trainer's, no longer a callback", exact_resume_as_trainer),
]


def canonical_text(config: Config) -> str:
    return json.dumps(config, sort_keys=True, separators=(",", ":"))


def digest(config: Config) -> str:
    """The SHA-256 of the config as sorted, compact JSON."""
    return hashlib.sha256(canonical_text(config).encode("utf-8")).hexdigest()


def comparable(config: Config) -> Config:
    """The config with EQUIVALENT_CHANGES applied: what two runs' identities compare."""
    for _, rewrite in EQUIVALENT_CHANGES:
        config = rewrite(config)
    return config


def identity(config: Config) -> str:
    return digest(comparable(config))


@functools.lru_cache(maxsize=256)
def _evaluated(file_name: str, text: str, stamp: Tuple[int, ...]) -> str:
    """A config's JSON text: the file `file_name`, or `text` as if it were that file (`stamp`:
    when its files last changed)."""
    if text:
        return params.evaluate_snippet(file_name, text, ext_vars=DATA_VARIABLES)
    return params.evaluate_file(file_name, ext_vars=DATA_VARIABLES)


def _stamp(paths: Sequence[str]) -> Tuple[int, ...]:
    """When the files a config may read last changed: `paths` and the package's configs."""
    files = list(paths) + glob.glob(os.path.join(CONFIGS, "*", "*.*sonnet"))
    return tuple(os.stat(path).st_mtime_ns if os.path.exists(path) else 0 for path in files)


def evaluate(path: str, text: str = "", imports: Sequence[str] = ()) -> Config:
    """The config file at `path` as jsonnet evaluates it (imported blocks included); with
    `text`, that text evaluated as if it were the file `path` (its relative imports from
    there), which imports the files `imports` (besides the package's configs). A fresh copy
    on every call; evaluated again once any of those files changed."""
    path = os.path.abspath(path)
    return json.loads(_evaluated(path, text, _stamp([path, *imports])))


def with_overrides(config: Config, overrides: Dict[str, Any]) -> Config:
    """AllenNLP's overrides applied as `allennlp train -o` applies them."""
    overrides_dict = params.parse_overrides(json.dumps(overrides))
    return params.with_overrides(config, overrides_dict) if overrides_dict else config


def wrapper_text(config: str, fields: Dict[str, Any], comment: str = "") -> str:
    """A jsonnet config that is `config` (a path inside the package, `elmo_plugin/...`, which
    resolves from anywhere) with the hidden `fields` set: `name:: value`, or for a name ending
    in "+", `name+:: value` (the value merged into the field's)."""
    lines = [f"// {line}".rstrip() for line in comment.splitlines()]
    lines.append(f"(import {json.dumps(config)}) + {{")
    for name, value in fields.items():
        separator = "+::" if name.endswith("+") else "::"
        lines.append(f"  {name.rstrip('+')}{separator} {json.dumps(value, sort_keys=True)},")
    lines.append("}")
    return "\n".join(lines) + "\n"


# A config flattened: the path of each leaf (its keys from the top) and the leaf. A leaf is any
# value but a non-empty object; lists are leaves.
Flat = Dict[Tuple[str, ...], Any]


def flatten(config: Any, prefix: Tuple[str, ...] = ()) -> Flat:
    if isinstance(config, dict) and config:
        flat: Flat = {}
        for key, value in config.items():
            flat.update(flatten(value, prefix + (key,)))
        return flat
    return {prefix: config}


def pointer(path: Tuple[str, ...]) -> str:
    """A path as a JSON pointer (RFC 6901), which any key survives (dots, slashes)."""
    return "".join("/" + key.replace("~", "~0").replace("/", "~1") for key in path)


def from_pointer(text: str) -> Tuple[str, ...]:
    return tuple(key.replace("~1", "/").replace("~0", "~") for key in text.split("/")[1:])


def dotted(path: Tuple[str, ...]) -> str:
    """A path as AllenNLP's overrides name it (`model.encoder.hidden_size`)."""
    return ".".join(path) if path else "(the whole config)"


def changes(base: Config, config: Config) -> Tuple[Dict[str, Any], List[str]]:
    """What turns `base` into `config`: the leaves set (by pointer) and the paths removed."""
    old, new = flatten(base), flatten(config)
    changed = {
        pointer(path): value
        for path, value in new.items()
        if path not in old or canonical_text(old[path]) != canonical_text(value)
    }
    removed = [pointer(path) for path in old if path not in new]
    return changed, sorted(removed)


def applied(base: Config, changed: Dict[str, Any], removed: List[str]) -> Config:
    """`base` with `changes` applied: the config they were taken from."""
    flat = flatten(base)
    for text in removed:
        flat.pop(from_pointer(text), None)
    for text, value in changed.items():
        path = from_pointer(text)
        # A leaf set below what was a leaf (an empty object, say) replaces it.
        for length in range(len(path)):
            flat.pop(path[:length], None)
        flat[path] = value
    return unflatten(flat)


def unflatten(flat: Flat) -> Any:
    if () in flat:
        return flat[()]
    config: Config = {}
    for path, value in flat.items():
        node = config
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return config


def differences(recorded: Config, current: Config, limit: int = 5) -> str:
    """The keys whose values differ, as `key: recorded -> current`, at most `limit` of them."""
    old, new = flatten(comparable(recorded)), flatten(comparable(current))
    lines = []
    for path in sorted(set(old) | set(new)):
        before, after = old.get(path, _ABSENT), new.get(path, _ABSENT)
        if before is _ABSENT or after is _ABSENT or canonical_text(before) != canonical_text(after):
            lines.append(f"{dotted(path)}: {_shown(before)} -> {_shown(after)}")
    more = f"; and {len(lines) - limit} more" if len(lines) > limit else ""
    return "; ".join(lines[:limit]) + more


_ABSENT = object()


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."
