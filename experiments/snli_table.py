"""
SNLI results in the shape of the paper's Table 3 (ESIM, with and without ELMo), on the fixed
splits of ../shared/data (train: the first 8,842 official dev pairs; dev: the last 1,000;
test: the official test set, 9,824 pairs).

Each row trains one `training_configs/snli/` config with `allennlp train` (in a fresh process,
so the wall-clock includes start-up, vocabulary, training, validation and the test evaluation),
with the model sizes and epochs given here, and prints the test accuracy, the wall-clock and
the biLM used. Run from the project root:

    python experiments/snli_table.py --output-dir /tmp/snli_table
    python experiments/snli_table.py --bilm-options /models/elmo/options.json \
        --bilm-weights /models/elmo/weights.hdf5 --hidden-dim 300 --num-epochs 10

The defaults fit 2 shared CPU cores (about 15 minutes a row at most).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from typing import Dict, List

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = {
    "baseline": "snli_baseline",
    "elmo_input": "snli_elmo_input",
    "elmo_output": "snli_elmo_output",
    "elmo_input_output": "snli_elmo_input_output",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output-dir", default="/tmp/snli_table", help="serialization dirs go here")
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS),
                        default=["baseline", "elmo_input", "elmo_input_output"])
    parser.add_argument("--bilm-options", default="fixtures/elmo/options.json")
    parser.add_argument("--bilm-weights", default="fixtures/elmo/lm_weights.hdf5")
    parser.add_argument("--hidden-dim", type=int, default=100)
    parser.add_argument("--word-dim", type=int, default=100)
    parser.add_argument("--num-epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch/OpenMP threads; more threads than free cores slows a shared machine "
                             "down many times over")
    parser.add_argument("--overrides", default="{}",
                        help='extra AllenNLP overrides, e.g. \'{"train_data_path": "..."}\'')
    return parser.parse_args()


def elmo_dim(options_file: str) -> int:
    with open(options_file) as options:
        return 2 * json.load(options)["lstm"]["projection_dim"]


def write_config(args: argparse.Namespace, variant: str) -> str:
    """A jsonnet file that imports the variant's config and sets the sizes of this table."""
    config = os.path.join(PROJECT_ROOT, "training_configs", "snli", VARIANTS[variant] + ".jsonnet")
    common_elmo = os.path.join(PROJECT_ROOT, "training_configs", "common", "elmo.libsonnet")
    text = f"""
local elmo = import {json.dumps(common_elmo)};
(import {json.dumps(config)}) + {{
  elmo_settings:: elmo + {{ options_file: {json.dumps(os.path.abspath(args.bilm_options))},
                            weight_file: {json.dumps(os.path.abspath(args.bilm_weights))} }},
  elmo_dim:: {elmo_dim(args.bilm_options)},
  hidden_dim:: {args.hidden_dim},
  word_dim:: {args.word_dim},
  num_epochs:: {args.num_epochs},
  batch_size:: {args.batch_size},
  lr:: {args.lr},
}}
"""
    path = os.path.join(args.output_dir, f"{variant}.jsonnet")
    with open(path, "w") as config_file:
        config_file.write(text)
    return path


def train(args: argparse.Namespace, variant: str) -> Dict[str, object]:
    serialization_dir = os.path.join(args.output_dir, variant)
    command = [
        sys.executable, "-m", "allennlp", "train", write_config(args, variant),
        "-s", serialization_dir, "--force", "--include-package", "elmo_plugin",
        "-o", args.overrides,
    ]
    log_path = os.path.join(args.output_dir, f"{variant}.log")
    start = time.time()
    environment = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)}
    with open(log_path, "w") as log:
        subprocess.run(command, cwd=PROJECT_ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT, check=True)
    wall_clock = time.time() - start
    with open(os.path.join(serialization_dir, "metrics.json")) as metrics_file:
        metrics = json.load(metrics_file)
    return {
        "variant": variant,
        "test_accuracy": metrics["test_accuracy"],
        "best_dev_accuracy": metrics["best_validation_accuracy"],
        "epochs": metrics["epoch"] + 1,
        "wall_clock_s": wall_clock,
        "bilm": "none" if variant == "baseline" else f"{args.bilm_options} + {args.bilm_weights} (dim {elmo_dim(args.bilm_options)})",
    }


def print_table(rows: List[Dict[str, object]]) -> None:
    print("| model | test acc. | best dev acc. | epochs | wall-clock | biLM |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| ESIM {row['variant']} | {100 * row['test_accuracy']:.2f} | "
            f"{100 * row['best_dev_accuracy']:.2f} | {row['epochs']} | "
            f"{row['wall_clock_s'] / 60:.1f} min | {row['bilm']} |",
            flush=True,
        )


def main() -> None:
    args = parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    print(f"hidden_dim={args.hidden_dim} word_dim={args.word_dim} epochs={args.num_epochs} "
          f"batch_size={args.batch_size} lr={args.lr} threads={args.threads} overrides={args.overrides}", flush=True)
    rows = []
    for variant in args.variants:
        rows.append(train(args, variant))
        print(json.dumps(rows[-1]), flush=True)
    with open(os.path.join(args.output_dir, "table.json"), "w") as table_file:
        json.dump(rows, table_file, indent=2)
    print_table(rows)


if __name__ == "__main__":
    main()
