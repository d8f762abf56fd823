"""
The table of experiments/lane_count.sh's runs: held-out perplexity after the same number of
training tokens at each lane count and learning rate, from each run's config and metrics.
With `--keep`, each finished run's record (its config and final metrics) goes into
experiments/results/lane_count/runs.json, which git keeps; docs/pretraining.md's table is
rendered from it (experiments/render_docs.py).

    python experiments/lane_count_table.py runs/lane_count --keep   # from the runs, kept
    python experiments/lane_count_table.py                          # from the records
"""

import glob
import json
import os
import sys
from typing import Any, Dict, List

from elmo_plugin.elmo.files.atomic_files import replaced_when_complete

RECORDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "lane_count")
RECORDS_FILE = os.path.join(RECORDS, "runs.json")


def _config_file(directory: str) -> str:
    config = os.path.join(directory, "config.json")
    return config if os.path.isfile(config) else os.path.join(directory, "run.json")


def read_run(directory: str) -> Dict[str, Any]:
    """A finished run's record: the config it trained and its final metrics."""
    with open(_config_file(directory), encoding="utf-8") as handle:
        config = json.load(handle)
    with open(os.path.join(directory, "metrics.json"), encoding="utf-8") as handle:
        metrics = json.load(handle)
    return {"config": config, "metrics": metrics}


def run_row(record: Dict[str, Any]) -> Dict[str, Any]:
    config, metrics = record["config"], record["metrics"]
    lanes = config["data_loader"]["batch_size"]
    batches = config["data_loader"]["batches_per_epoch"]
    return {
        "lanes": lanes,
        "lr": config["trainer"]["optimizer"]["lr"],
        "tokens": lanes * config["dataset_reader"]["window_length"] * batches,
        "steps": batches,
        "forward": metrics["validation_forward_perplexity"],
        "backward": metrics["validation_backward_perplexity"],
        "both": metrics["validation_perplexity"],
        "duration": metrics["training_duration"].split(".")[0],
    }


def rows_of_records(path: str = RECORDS_FILE) -> List[Dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [run_row(record) for record in json.load(handle)["runs"].values()]


def table(rows: List[Dict[str, Any]]) -> str:
    lines = [
        "| lanes | learning rate | tokens | steps | held-out perplexity (fwd / bwd / both) "
        "| training time |",
        "|---|---|---|---|---|---|",
    ]
    for row in sorted(rows, key=lambda r: (r["lanes"], r["lr"])):
        lines.append(
            f"| {row['lanes']} | {row['lr']} | {row['tokens']:,} | {row['steps']} | "
            f"{row['forward']:.1f} / {row['backward']:.1f} / {row['both']:.1f} | "
            f"{row['duration']} |"
        )
    return "\n".join(lines)


def keep_records(finished: List[str]) -> None:
    """Adds the finished runs' records to RECORDS_FILE (written atomically)."""
    runs: Dict[str, Any] = {}
    if os.path.isfile(RECORDS_FILE):
        with open(RECORDS_FILE, encoding="utf-8") as handle:
            runs = json.load(handle)["runs"]
    runs.update({os.path.basename(directory): read_run(directory) for directory in finished})
    os.makedirs(RECORDS, exist_ok=True)
    with replaced_when_complete(RECORDS_FILE) as partial:
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump({"runs": runs}, handle, indent=1, sort_keys=True)
            handle.write("\n")


def main(results: str, keep: bool) -> None:
    if os.path.isfile(results):
        print(table(rows_of_records(results)))
        return
    finished = sorted(
        os.path.dirname(path) for path in glob.glob(os.path.join(results, "*", "metrics.json"))
    )
    if keep:
        keep_records(finished)
    print(table([run_row(read_run(directory)) for directory in finished]))


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--keep"]
    main(arguments[0] if arguments else RECORDS_FILE, "--keep" in sys.argv[1:])
