"""
Runs `allennlp train` in fresh processes, a few at a time, and keeps what they produce: the
machinery behind `experiments/paper_tables.py`.

A run is a config file, the hidden fields it sets in it (written into a small wrapper config
beside the run's serialization dir, which is what `allennlp train` trains), AllenNLP overrides
and a serialization dir. A finished run leaves a record in its task's scores file
(experiments/records.py), which git keeps: a later run whose effective config (the config as
AllenNLP trains it, experiments/configs.py) is the recorded one is finished and read back, not
trained again (unless forced), so an interrupted job resumes where it stopped, a fresh clone
renders every table at once, and a run whose config changed trains again, saying which keys
changed. The record also keeps the run's wall-clock, so a table read from finished runs still
reports what they cost.
"""

import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from experiments import configs, records
from experiments.configs import Config
from experiments.markdown import minutes

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "elmo_plugin"
# The task configs, which the package installs as its own (setup.py).
CONFIGS = "training_configs"


def project_path(path: str) -> str:
    """`path` relative to the project root when it lies inside it (runs start there), else
    absolute: a run's settings, and so its record, then do not depend on where the clone is."""
    path = os.path.abspath(path)
    inside = os.path.commonpath([path, PROJECT_ROOT]) == PROJECT_ROOT
    return os.path.relpath(path, PROJECT_ROOT) if inside else path


@dataclass
class Run:
    """One `allennlp train` of `config` (relative to the project root, where it runs) with the
    hidden `fields` set and `overrides` applied, into `serialization_dir` (absolute); the log
    and the wrapper config go beside the dir, which `--force` empties. Its record goes to the
    scores file `records` (default: `<dir of serialization_dir>.json`, one a task) under the
    name's part after its task (`ner/elmo` -> `elmo`), with the per-epoch values of
    `epoch_metrics` and the `facts` about its data."""

    name: str
    config: str
    overrides: Dict[str, Any]
    serialization_dir: str
    fields: Dict[str, Any] = field(default_factory=dict)
    records: str = ""
    epoch_metrics: Tuple[str, ...] = ()
    facts: Dict[str, Any] = field(default_factory=dict)

    @property
    def log_path(self) -> str:
        return self.serialization_dir + ".log"

    @property
    def wrapper_path(self) -> str:
        return self.serialization_dir + ".jsonnet"

    @property
    def records_file(self) -> str:
        return self.records or os.path.dirname(self.serialization_dir) + ".json"

    @property
    def record_name(self) -> str:
        return self.name.split("/", 1)[-1]

    @property
    def settings(self) -> Dict[str, Any]:
        settings: Dict[str, Any] = {"config": self.config}
        if self.fields:
            settings["fields"] = self.fields
        settings["overrides"] = self.overrides
        return json.loads(json.dumps(settings))

    def wrapper_text(self) -> str:
        """The config `allennlp train` trains: `config` with the hidden `fields` set."""
        # The package's configs by their package name, which resolves from anywhere.
        inside = self.config.startswith(CONFIGS + "/")
        config = f"{PACKAGE}/{self.config}" if inside else os.path.join(PROJECT_ROOT, self.config)
        comment = (
            f"The run {self.name} of experiments/paper_tables.py: {self.config} with these "
            "hidden fields."
        )
        return configs.wrapper_text(config, self.fields, comment)

    def base_config(self) -> Config:
        """The config file as jsonnet evaluates it (imported blocks included)."""
        return configs.evaluate(os.path.join(PROJECT_ROOT, self.config))

    def effective_config(self) -> Config:
        """The config as AllenNLP trains it: the config file (with the fields) evaluated, the
        overrides applied."""
        if self.fields:
            imported = os.path.join(PROJECT_ROOT, self.config)
            config = configs.evaluate(self.wrapper_path, self.wrapper_text(), [imported])
        else:
            config = self.base_config()
        return configs.with_overrides(config, self.overrides)

    def trained_config(self) -> str:
        return project_path(self.wrapper_path) if self.fields else self.config

    def write_wrapper(self) -> None:
        if self.fields:
            os.makedirs(os.path.dirname(self.wrapper_path), exist_ok=True)
            with open(self.wrapper_path, "w", encoding="utf-8") as handle:
                handle.write(self.wrapper_text())

    def command(self) -> List[str]:
        return [
            sys.executable,
            "-m",
            "allennlp",
            "train",
            self.trained_config(),
            "-s",
            self.serialization_dir,
            "--include-package",
            PACKAGE,
            "-o",
            json.dumps(self.overrides, sort_keys=True),
            "--file-friendly-logging",
            "--force",
        ]


@dataclass
class Result:
    """What a run left: its final metrics, per-epoch values and wall-clock, or why it has none.
    A result that stands for several runs of the same settings at other seeds (`seeds` of
    them) holds their mean metrics, summed wall-clock and, in `spread`, each metric's sample
    standard deviation."""

    run: Run
    metrics: Dict[str, Any] = field(default_factory=dict)
    wall_clock_s: Optional[float] = None
    cached: bool = False
    error: Optional[str] = None
    seeds: int = 1
    spread: Dict[str, float] = field(default_factory=dict)
    environment: Optional[str] = None
    epochs: Dict[str, List[float]] = field(default_factory=dict)
    facts: Dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


def software_environment() -> str:
    """What a run is trained with (`train` runs it with this Python): the install profile's
    versions, kept in its record because a table can mix runs of several jobs."""
    packages = ", ".join(f"{name} {version(name)}" for name in ("torch", "allennlp"))
    return f"Python {platform.python_version()}, {packages}, {platform.machine()}"


def thread_environment(threads: int) -> Dict[str, str]:
    # More threads than free cores makes every parallel op wait for a descheduled thread.
    threads_named = {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    return {**os.environ, **configs.DATA_VARIABLES, **threads_named}


def shell_command(run: Run, threads: int) -> str:
    """The run as one line to paste into a shell in the project root."""
    variables = {**configs.DATA_VARIABLES, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    named = " ".join(f"{name}={value}" for name, value in variables.items())
    return f"{named} " + shlex.join(run.command())


def look_up(run: Run) -> Tuple[Optional[Result], Optional[str]]:
    """The run's result if its task's scores file has a record of it with the same effective
    config; else None and, when there is a record, why it does not count (which keys of the
    config differ)."""
    record = records.find(run.records_file, run.record_name)
    if record is None:
        return None, None
    recorded = records.checked_config(run.records_file, run.record_name, record)
    current = run.effective_config()
    if configs.identity(recorded) != configs.identity(current):
        return None, (
            f"its record in {project_path(run.records_file)} was trained with another config "
            f"({configs.differences(recorded, current)})"
        )
    result = Result(
        run,
        record["metrics"],
        record["wall_clock_s"],
        cached=True,
        environment=record.get("environment"),
        epochs=record.get("epochs", {}),
        facts=record.get("facts", {}),
    )
    return result, None


def finished(run: Run) -> Optional[Result]:
    return look_up(run)[0]


def epoch_files(serialization_dir: str) -> List[str]:
    """The dir's `metrics_epoch_*.json` in epoch order (epoch 10 after 9, not after 1)."""
    names = [name for name in os.listdir(serialization_dir) if _EPOCH_FILE.fullmatch(name)]
    names.sort(key=lambda name: int(_EPOCH_FILE.fullmatch(name).group(1)))  # type: ignore
    return [os.path.join(serialization_dir, name) for name in names]


_EPOCH_FILE = re.compile(r"metrics_epoch_(\d+)\.json")


def epoch_values(serialization_dir: str, keys: Sequence[str]) -> Dict[str, List[float]]:
    """Each of `keys` after every epoch, from the dir's `metrics_epoch_*.json`."""
    values: Dict[str, List[float]] = {key: [] for key in keys}
    for path in epoch_files(serialization_dir):
        with open(path, encoding="utf-8") as handle:
            metrics = json.load(handle)
        for key in keys:
            if key in metrics:
                values[key].append(metrics[key])
    return {key: series for key, series in values.items() if series}


def record_of(
    run: Run, wall_clock_s: float, threads: int, config: Config, environment: str
) -> Tuple[records.Record, Config]:
    """The record of a run trained into its serialization dir, and its base config."""
    with open(os.path.join(run.serialization_dir, "metrics.json"), encoding="utf-8") as handle:
        metrics = json.load(handle)
    base = run.base_config()
    record = records.new_record(
        run.settings,
        base,
        config,
        wall_clock_s=wall_clock_s,
        threads=threads,
        environment=environment,
        metrics=metrics,
        epochs=epoch_values(run.serialization_dir, run.epoch_metrics),
        facts=run.facts,
    )
    return record, base


def train(run: Run, threads: int) -> Result:
    """Trains the run in a fresh process and records it; a failure is returned, not raised,
    so the other runs of a job go on."""
    os.makedirs(os.path.dirname(run.serialization_dir), exist_ok=True)
    run.write_wrapper()
    start = time.perf_counter()
    with open(run.log_path, "w", encoding="utf-8") as log:
        process = subprocess.run(
            run.command(),
            cwd=PROJECT_ROOT,
            env=thread_environment(threads),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    wall_clock_s = time.perf_counter() - start
    if process.returncode != 0:
        return Result(
            run, wall_clock_s=wall_clock_s, error=f"exit {process.returncode}, see {run.log_path}"
        )
    # The config AllenNLP trained, as it saved it: the record's, and so the run's identity.
    with open(os.path.join(run.serialization_dir, "config.json"), encoding="utf-8") as handle:
        trained = json.load(handle)
    environment = software_environment()
    record, base = record_of(run, wall_clock_s, threads, trained, environment)
    records.add(run.records_file, run.record_name, record, base)
    result = Result(
        run,
        record["metrics"],
        wall_clock_s,
        environment=environment,
        epochs=record.get("epochs", {}),
        facts=run.facts,
    )
    if configs.identity(trained) != configs.identity(run.effective_config()):
        result.error = (
            "AllenNLP trained another config than the one the run's identity is taken from "
            f"({configs.differences(run.effective_config(), trained)}): it would train again"
        )
    return result


class Runner:
    """Trains runs `parallel` at a time, each on `threads` threads, and remembers every result
    of this job, so a run that several tables share trains once even with `force` (which
    retrains runs finished by an earlier job). With `dry_run` it lists the commands instead
    (writing the wrapper configs they train, so each runs as printed); with `records_only` it
    neither trains nor lists: a run without a record is a result with an error."""

    def __init__(
        self,
        parallel: int = 1,
        threads: int = 1,
        force: bool = False,
        dry_run: bool = False,
        report: Optional[Callable[[str], None]] = None,
        records_only: bool = False,
    ) -> None:
        self.parallel, self.threads, self.force, self.dry_run = parallel, threads, force, dry_run
        self.records_only = records_only
        self.report = report or (lambda line: print(line, file=sys.stderr, flush=True))
        self.results: Dict[str, Result] = {}
        self.trained: List[str] = []  # names, in the order they were trained

    def results_of(self, runs: Iterable[Run]) -> Dict[str, Result]:
        """The results of `runs` by name, training those that have none yet."""
        runs = list(runs)
        to_train: List[Run] = []
        for run in runs:
            if run.name in self.results or run.name in {other.name for other in to_train}:
                continue
            result, why = (None, None) if self.force else look_up(run)
            if result is not None:
                self.results[run.name] = result
                self.report(f"cached   {run.name} ({project_path(run.records_file)})")
                continue
            if why is not None:
                self.report(f"stale    {run.name}: {why}")
            to_train.append(run)
        if self.records_only:
            for run in to_train:
                self.results[run.name] = Result(run, error="no record")
        elif self.dry_run:
            for run in to_train:
                run.write_wrapper()
                print(shell_command(run, self.threads), flush=True)
                self.results[run.name] = Result(run, error="not trained (dry run)")
        else:
            with ThreadPoolExecutor(max_workers=max(1, self.parallel)) as pool:
                for result in pool.map(self._train_and_report, to_train):
                    self.results[result.run.name] = result
        return {run.name: self.results[run.name] for run in runs}

    def _train_and_report(self, run: Run) -> Result:
        self.report(f"training {run.name} (log {run.log_path})")
        result = train(run, self.threads)
        self.trained.append(run.name)
        outcome = "done" if result.ok else "FAILED"
        self.report(
            f"{outcome:8} {run.name} in {minutes(result.wall_clock_s)}"
            + ("" if result.ok else f": {result.error}")
        )
        return result
