"""
The records of finished runs: one scores file per task, `<records>/<task>.json`, which git keeps
(experiments/results/), from which a later job reads a finished run back instead of training it
and experiments/render_docs.py renders the docs' tables. A run's serialization dir (weights,
logs) stays outside the tracked tree and is not needed again.

    {"configs": {DIGEST: CONFIG, ...},      each config file's evaluation, once
     "runs": {NAME: RECORD, ...}}           NAME: the run's name within its task

A record:

    settings        how the run was asked for: its config file, the hidden fields it set and
                    its AllenNLP overrides (`config`, `fields`, `overrides`)
    base_config     the digest of its config file's evaluation (a key of "configs")
    config_changes  what the settings changed in it: {JSON pointer: value}, and
    config_removed  the pointers they removed (if any); base and changes are the effective
                    config, the config AllenNLP trained
    config_digest   the effective config's digest (experiments/configs.py): a check of the
                    stored config; a run's identity compares effective configs
    wall_clock_s, threads, environment
    metrics         the final metrics (AllenNLP's metrics.json)
    epochs          the per-epoch values the tables show: {metric: [value after each epoch]}
    facts           what the tables show of the run's data (e.g. training_sentences), if any

Every write replaces the file atomically (a complete old or new file, never half), under a
lock, after reading it again, so runs finishing at once in one job or in several all land.
"""

import fcntl
import json
import os
import threading
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Optional, Tuple

from elmo_plugin.elmo.files.atomic_files import replaced_when_complete

from experiments import configs
from experiments.configs import Config

Record = Dict[str, Any]
ScoresFile = Dict[str, Any]

_LOCK = threading.Lock()
_CACHE: Dict[str, Tuple[Tuple[int, int], ScoresFile]] = {}


def empty() -> ScoresFile:
    return {"configs": {}, "runs": {}}


def read(path: str) -> ScoresFile:
    """The scores file at `path` (empty when there is none), read again only once changed."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return empty()
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _CACHE.get(path)
    if cached is None or cached[0] != stamp:
        with open(path, encoding="utf-8") as handle:
            cached = (stamp, json.load(handle))
        _CACHE[path] = cached
    return cached[1]


def find(path: str, name: str) -> Optional[Record]:
    return read(path)["runs"].get(name)


def effective_config(scores: ScoresFile, record: Record) -> Config:
    """The config the record's run trained (its base config with its changes)."""
    base = scores["configs"][record["base_config"]]
    return configs.applied(base, record["config_changes"], record.get("config_removed", []))


def checked_config(path: str, name: str, record: Record) -> Config:
    """`effective_config`, checked against the digest recorded with it."""
    config = effective_config(read(path), record)
    if configs.digest(config) != record["config_digest"]:
        raise ValueError(
            f"{path}: the record of {name} is damaged: its config does not match its digest "
            "(edited by hand?); remove the record to train the run again"
        )
    return config


def new_record(settings: Dict[str, Any], base: Config, config: Config, **fields: Any) -> Record:
    """A record of a run with `settings` whose config file evaluates to `base` and which
    trained `config`; `fields` the rest (wall_clock_s, metrics, ...)."""
    changed, removed = configs.changes(base, config)
    record: Record = {
        "settings": settings,
        "base_config": configs.digest(base),
        "config_changes": changed,
        "config_digest": configs.digest(config),
    }
    if removed:
        record["config_removed"] = removed
    record.update({key: value for key, value in fields.items() if value not in (None, {})})
    return record


def add(path: str, name: str, record: Record, base: Config) -> None:
    """Adds (or replaces) the record of run `name`, whose base config is `base`."""
    with _locked(path):
        _CACHE.pop(path, None)
        scores = read(path)
        scores["runs"][name] = record
        scores["configs"][record["base_config"]] = base
        _write(path, scores)


def _write(path: str, scores: ScoresFile) -> None:
    used = {record["base_config"] for record in scores["runs"].values()}
    scores = {
        "configs": {key: value for key, value in scores["configs"].items() if key in used},
        "runs": scores["runs"],
    }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with replaced_when_complete(path) as partial:
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(scores, handle, indent=1, sort_keys=True, ensure_ascii=False)
            handle.write("\n")
    _CACHE.pop(path, None)


@contextmanager
def _locked(path: str) -> Iterator[None]:
    """This process's threads, and other processes, one at a time (a lock file beside)."""
    directory, name = os.path.split(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with _LOCK, open(os.path.join(directory, f".{name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
