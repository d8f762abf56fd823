"""
CoNLL-2003 NER, baseline and +ELMo, trained on the full official train set for a fixed
small budget (`--epochs`, default 3: about 10-15 minutes a run on 2 CPU cores) with
`allennlp train`, evaluated on the official test set (`evaluate_on_test`), one table row per
run. Run from the repository root:

    python experiments/ner_table.py --epochs 3 --output-dir /tmp/ner_table
    python experiments/ner_table.py --bilm-options /m/options.json --bilm-weights /m/weights.hdf5

Without `--bilm-*` the +ELMo run uses the default biLM of `ner_elmo.jsonnet` (the tiny test
fixture, `fixtures/elmo`), which shows the cost of ELMo but cannot show its benefit; give a
pretrained biLM (e.g. one from `allennlp elmo-export`) for that.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from typing import Dict, Optional

CONFIGS = "training_configs/ner"
BASELINE_INPUT_DIM = 164  # word 100 + character CNN 64, as in ner_baseline.jsonnet


def elmo_overrides(options: Optional[str], weights: Optional[str]) -> Dict:
    if options is None:
        return {}
    with open(options, encoding="utf-8") as handle:
        elmo_dim = 2 * json.load(handle)["lstm"]["projection_dim"]
    embedder = "model.text_field_embedder.token_embedders.elmo"
    return {
        f"{embedder}.options_file": options,
        f"{embedder}.weight_file": weights,
        "model.encoder.input_size": BASELINE_INPUT_DIM + elmo_dim,
    }


def train(config: str, serialization_dir: str, overrides: Dict, threads: int) -> float:
    """Trains with `allennlp train` on `threads` CPU threads; returns the wall-clock seconds."""
    command = [
        sys.executable, "-m", "allennlp", "train", f"{CONFIGS}/{config}",
        "-s", serialization_dir, "--include-package", "elmo_plugin.tasks.ner",
        "-o", json.dumps(overrides), "--file-friendly-logging", "--force",
    ]
    # More threads than free cores makes every parallel op wait for a descheduled thread.
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    start = time.perf_counter()
    with open(f"{serialization_dir}.log", "w") as log:
        subprocess.run(command, check=True, stdout=log, stderr=subprocess.STDOUT, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--output-dir", default="/tmp/ner_table")
    parser.add_argument("--bilm-options")
    parser.add_argument("--bilm-weights")
    parser.add_argument("--runs", default="baseline,elmo", help="comma-separated: baseline, elmo")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads per run")
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    bilm = args.bilm_options or "fixtures/elmo/options.json (test fixture)"
    runs = {
        "baseline": ("ner_baseline.jsonnet", {}, "-"),
        "elmo": ("ner_elmo.jsonnet", elmo_overrides(args.bilm_options, args.bilm_weights), bilm),
    }
    print("| run | biLM | epochs | best dev F1 | test F1 | train+eval wall-clock |")
    print("|---|---|---|---|---|---|", flush=True)
    for name in args.runs.split(","):
        config, overrides, bilm_used = runs[name]
        directory = os.path.join(args.output_dir, name)
        seconds = train(config, directory, {"trainer.num_epochs": args.epochs, **overrides}, args.threads)
        with open(os.path.join(directory, "metrics.json"), encoding="utf-8") as handle:
            metrics = json.load(handle)
        print(
            f"| {name} | {bilm_used} | {args.epochs} | "
            f"{100 * metrics['best_validation_f1-measure-overall']:.2f} | "
            f"{100 * metrics['test_f1-measure-overall']:.2f} | {seconds / 60:.1f} min |",
            flush=True,
        )


if __name__ == "__main__":
    main()
