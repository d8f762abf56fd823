"""
Turns run dirs of the earlier layout, `<dir>/<task>/<run>/` holding `run.json` (settings, config
digest, wall-clock), `metrics.json` and `metrics_epoch_*.json` (as experiments/paper_tables.py
kept them in experiments/results/ before), into records in the scores files `<records>/<task>.json`
(experiments/records.py) that the job now reads finished runs back from.

A run converts only when the config digest in its run.json (of its config file's evaluation,
without overrides) is still that of its config file: its effective config is then that file as it
is now with the run's recorded overrides. A run whose config file changed since is stale: it is
reported and left out (the job trains it again). So are unfinished dirs (no run.json or
metrics.json). Rerunnable: a run recorded already with the same effective config is left as it
is, and one recorded with another is reported, not replaced.

    python experiments/convert_run_records.py experiments/results/paper_tables
    python experiments/convert_run_records.py experiments/results/squad_budget
    python experiments/convert_run_records.py OLD_DIR --records experiments/results/paper_tables

(`--records` defaults to the dir converted.) Prints a line a run and a summary; exits 1 when a
run was stale or damaged.
"""

import argparse
import glob
import hashlib
import json
import os
import sys
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence

if __package__ in (None, ""):  # run as a file: the project root, not experiments/, on the path
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from experiments import configs, records  # noqa: E402
from experiments.allennlp_runs import PROJECT_ROOT, epoch_values, project_path  # noqa: E402
from experiments.samples import FORMATS, SAMPLE_FILE, sample_size  # noqa: E402
from experiments.tasks import TASKS  # noqa: E402


def old_digest(config_file: str) -> str:
    """The digest the earlier layout kept: of the config file's jsonnet evaluation (text)."""
    text = configs.params.evaluate_file(
        os.path.join(PROJECT_ROOT, config_file), ext_vars=configs.DATA_VARIABLES
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def training_sentences(
    config: Dict[str, Any], base: Dict[str, Any], file_format: str
) -> Optional[int]:
    """How many training sentences the run read: its sample's size (a fraction of its config
    file's training data), or all of its training data; None without the data here."""
    path = config.get("train_data_path", "")
    sample = SAMPLE_FILE.fullmatch(os.path.basename(path))
    fraction = 1.0
    if sample is not None:
        fraction, path = float(sample["percent"]) / 100, base["train_data_path"]
    try:
        sentences = FORMATS[file_format].read(os.path.join(PROJECT_ROOT, path))
        return sample_size(len(sentences), fraction)
    except FileNotFoundError:
        return None


def convert(run_dir: str, records_dir: str) -> str:
    """Converts one run dir; returns what happened, as a word and why."""
    task, name = os.path.basename(os.path.dirname(run_dir)), os.path.basename(run_dir)
    record_path = os.path.join(run_dir, "run.json")
    if not os.path.isfile(os.path.join(run_dir, "metrics.json")) or not os.path.isfile(record_path):
        return "unfinished: no run.json and metrics.json"
    with open(record_path, encoding="utf-8") as handle:
        old = json.load(handle)
    settings = old["settings"]
    if old.get("config_digest") != old_digest(settings["config"]):
        return f"stale: {settings['config']} changed since it was trained"
    base = configs.evaluate(os.path.join(PROJECT_ROOT, settings["config"]))
    config = configs.with_overrides(
        configs.evaluate(os.path.join(PROJECT_ROOT, settings["config"])), settings["overrides"]
    )
    scores_file = os.path.join(records_dir, f"{task}.json")
    existing = records.find(scores_file, name)
    if existing is not None:
        if existing["config_digest"] == configs.digest(config):
            return "recorded already"
        return "kept: recorded already with another config (not replaced)"
    with open(os.path.join(run_dir, "metrics.json"), encoding="utf-8") as handle:
        metrics = json.load(handle)
    facts: Dict[str, Any] = {}
    file_format = TASKS[task].sample_format if task in TASKS else None
    if file_format is not None:
        count = training_sentences(config, base, file_format)
        if count is not None:
            facts["training_sentences"] = count
    curve = (TASKS[task].epoch_curve_metric,) if task in TASKS else ()
    record = records.new_record(
        settings,
        base,
        config,
        wall_clock_s=old["wall_clock_s"],
        threads=old.get("threads"),
        environment=old.get("environment"),
        metrics=metrics,
        epochs=epoch_values(run_dir, curve),
        facts=facts,
    )
    records.add(scores_file, name, record, base)
    return "converted"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("directory", help="the dir of the run dirs, `<task>/<run>/run.json`")
    parser.add_argument("--records", help="where the scores files go (default: the directory)")
    args = parser.parse_args(argv)
    records_dir = args.records or args.directory
    outcomes: Counter = Counter()
    failed: List[str] = []
    for run_dir in sorted(glob.glob(os.path.join(args.directory, "*", "*", ""))):
        run_dir = os.path.normpath(run_dir)
        if os.path.basename(os.path.dirname(run_dir)) == "data":
            continue
        try:
            outcome = convert(run_dir, records_dir)
        except (KeyError, ValueError) as error:
            outcome = f"damaged: {error!r}"
        word = outcome.split(":")[0]
        outcomes[word] += 1
        if word in ("stale", "damaged"):
            failed.append(run_dir)
        print(f"{word:17} {project_path(run_dir)}{outcome[len(word):]}", flush=True)
    summary = ", ".join(f"{count} {word}" for word, count in sorted(outcomes.items()))
    print(f"{project_path(args.directory)}: {summary or 'no run dirs'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
