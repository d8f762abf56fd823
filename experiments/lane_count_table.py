"""
The table of experiments/lane_count.sh's runs: held-out perplexity after the same number of
training tokens at each lane count and learning rate, from each run's config and metrics.
With `--keep`, each run's record (its `config.json` as `run.json`, and `metrics.json`) is
copied to experiments/results/lane_count/, which git keeps, and the table written beside them.

    python experiments/lane_count_table.py runs/lane_count --keep
    python experiments/lane_count_table.py experiments/results/lane_count   # from the records
"""

import glob
import json
import os
import shutil
import sys
from typing import Dict, List

RECORDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "lane_count")


def _config_file(directory: str) -> str:
    config = os.path.join(directory, "config.json")
    return config if os.path.isfile(config) else os.path.join(directory, "run.json")


def run_row(directory: str) -> Dict:
    with open(_config_file(directory), encoding="utf-8") as handle:
        config = json.load(handle)
    with open(os.path.join(directory, "metrics.json"), encoding="utf-8") as handle:
        metrics = json.load(handle)
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


def table(rows: List[Dict]) -> str:
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
    for directory in finished:
        kept = os.path.join(RECORDS, os.path.basename(directory))
        os.makedirs(kept, exist_ok=True)
        shutil.copyfile(_config_file(directory), os.path.join(kept, "run.json"))
        shutil.copyfile(os.path.join(directory, "metrics.json"), os.path.join(kept, "metrics.json"))


def render(finished: List[str]) -> str:
    return (
        "bilm_wikipedia_cpu.jsonnet's model with the paper's recipe (packed windows of 20 "
        "tokens, Adagrad, gradient norm 10, sparse softmax gradient, bfloat16), the same number "
        "of training tokens at each lane count; held-out perplexity with the full softmax on the "
        "first 1,000 sentences of the Wikipedia valid split (`experiments/lane_count.sh`, current "
        "profile, one thread a run).\n\n"
        + table([run_row(directory) for directory in finished])
        + "\n"
    )


def main(results: str, keep: bool) -> None:
    finished = sorted(
        os.path.dirname(path) for path in glob.glob(os.path.join(results, "*", "metrics.json"))
    )
    text = render(finished)
    if keep:
        keep_records(finished)
        with open(os.path.join(RECORDS, "table.md"), "w", encoding="utf-8") as handle:
            handle.write(text)
    print(text, end="")


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--keep"]
    main(arguments[0] if arguments else "runs/lane_count", "--keep" in sys.argv[1:])
