"""
Runs `allennlp train` in fresh processes, a few at a time, and keeps what they produce: the
machinery behind `experiments/paper_tables.py`.

A run is a config, its overrides and a serialization dir. A run whose dir holds `metrics.json`
and a `run.json` recording the same config and overrides, and the same config text (its digest,
imports included), is finished: it is read back, not trained again (unless forced), so an
interrupted job resumes where it stopped, and a run whose config file changed trains again.
`run.json` also keeps the run's wall-clock, so a table read from finished runs still reports
what they cost.
"""

import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any, Callable, Dict, Iterable, List, Optional

import _jsonnet

from experiments.markdown import minutes

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_RECORD = "run.json"


def project_path(path: str) -> str:
    """`path` relative to the project root when it lies inside it (runs start there), else
    absolute: a run's settings, and so its record, then do not depend on where the clone is."""
    path = os.path.abspath(path)
    inside = os.path.commonpath([path, PROJECT_ROOT]) == PROJECT_ROOT
    return os.path.relpath(path, PROJECT_ROOT) if inside else path


@dataclass
class Run:
    """One `allennlp train`: `config` is relative to the project root (where it runs),
    `serialization_dir` absolute; the log goes beside the dir, which `--force` empties."""

    name: str
    config: str
    overrides: Dict[str, Any]
    serialization_dir: str

    @property
    def log_path(self) -> str:
        return self.serialization_dir + ".log"

    @property
    def settings(self) -> Dict[str, Any]:
        return {"config": self.config, "overrides": self.overrides}

    def config_digest(self) -> str:
        """The SHA-256 of the config as jsonnet evaluates it (imported blocks included)."""
        text = _jsonnet.evaluate_file(os.path.join(PROJECT_ROOT, self.config))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def command(self) -> List[str]:
        return [
            sys.executable,
            "-m",
            "allennlp",
            "train",
            self.config,
            "-s",
            self.serialization_dir,
            "--include-package",
            "elmo_plugin",
            "-o",
            json.dumps(self.overrides, sort_keys=True),
            "--file-friendly-logging",
            "--force",
        ]


@dataclass
class Result:
    """What a run left: its final metrics and wall-clock, or why it has none. A result that
    stands for several runs of the same settings at other seeds (`seeds` of them) holds their
    mean metrics, summed wall-clock and, in `spread`, each metric's sample standard deviation."""

    run: Run
    metrics: Dict[str, Any] = field(default_factory=dict)
    wall_clock_s: Optional[float] = None
    cached: bool = False
    error: Optional[str] = None
    seeds: int = 1
    spread: Dict[str, float] = field(default_factory=dict)
    environment: Optional[str] = None

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
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}


def shell_command(run: Run, threads: int) -> str:
    """The run as one line to paste into a shell in the project root."""
    return f"OMP_NUM_THREADS={threads} MKL_NUM_THREADS={threads} " + shlex.join(run.command())


def finished(run: Run) -> Optional[Result]:
    """The run's result if its dir holds one made with the same config and overrides."""
    record_path = os.path.join(run.serialization_dir, RUN_RECORD)
    metrics_path = os.path.join(run.serialization_dir, "metrics.json")
    if not (os.path.isfile(record_path) and os.path.isfile(metrics_path)):
        return None
    with open(record_path, encoding="utf-8") as handle:
        record = json.load(handle)
    if record.get("settings") != json.loads(json.dumps(run.settings)):
        return None
    digest = record.get("config_digest")  # none in records written before digests were kept
    if digest is not None and digest != run.config_digest():
        return None
    with open(metrics_path, encoding="utf-8") as handle:
        metrics = json.load(handle)
    return Result(
        run, metrics, record["wall_clock_s"], cached=True, environment=record.get("environment")
    )


def train(run: Run, threads: int) -> Result:
    """Trains the run in a fresh process and records it; a failure is returned, not raised,
    so the other runs of a job go on."""
    os.makedirs(os.path.dirname(run.serialization_dir), exist_ok=True)
    digest = run.config_digest()
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
    record = {
        "settings": run.settings,
        "config_digest": digest,
        "wall_clock_s": wall_clock_s,
        "threads": threads,
        "environment": software_environment(),
    }
    with open(os.path.join(run.serialization_dir, RUN_RECORD), "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=2)
    with open(os.path.join(run.serialization_dir, "metrics.json"), encoding="utf-8") as handle:
        return Result(run, json.load(handle), wall_clock_s, environment=record["environment"])


class Runner:
    """Trains runs `parallel` at a time, each on `threads` threads, and remembers every result
    of this job, so a run that several tables share trains once even with `force` (which
    retrains runs finished by an earlier job). With `dry_run` it reports the commands instead.
    """

    def __init__(
        self,
        parallel: int = 1,
        threads: int = 1,
        force: bool = False,
        dry_run: bool = False,
        report: Optional[Callable[[str], None]] = None,
    ) -> None:
        self.parallel, self.threads, self.force, self.dry_run = parallel, threads, force, dry_run
        self.report = report or (lambda line: print(line, file=sys.stderr, flush=True))
        self.results: Dict[str, Result] = {}
        self.trained: List[str] = []  # names, in the order they were trained

    def results_of(self, runs: Iterable[Run]) -> Dict[str, Result]:
        """The results of `runs` by name, training those that have none yet."""
        runs = list(runs)
        to_train = []
        for run in runs:
            if run.name in self.results:
                continue
            result = None if self.force else finished(run)
            if result is None:
                to_train.append(run)
            else:
                self.results[run.name] = result
                self.report(f"cached   {run.name} ({run.serialization_dir})")
        if self.dry_run:
            for run in to_train:
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
