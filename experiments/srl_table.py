"""
SRL results in the shape of the ELMo paper's SRL row (the He et al. 2017 deep tagger, with
and without ELMo), on Universal PropBank English-EWT with the fixed split of ../shared/data
(train: the official dev file minus its last 200 sentences; dev: those 200; test: the
official test file). Scores are span precision/recall/F1 without the verb (label mode
"span"), or (predicate, head, role) scores with --label-mode head.

Each row trains one `training_configs/srl/` config with `allennlp train` in a fresh process
(so the wall-clock includes start-up, vocabulary, training, validation each epoch and the
test evaluation), with the sizes and epochs given here, and prints the test scores, the
wall-clock and the biLM used. Run from the project root:

    python experiments/srl_table.py --output-dir /tmp/srl_table
    python experiments/srl_table.py --bilm-options /models/elmo/options.json \
        --bilm-weights /models/elmo/weights.hdf5 --num-layers 8 --hidden-size 300 \
        --num-epochs 20 --threads 8

The defaults fit 2 shared CPU cores (at most about 15 minutes a row).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from typing import Dict, List

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = {"baseline": "srl_baseline", "elmo": "srl_elmo"}
WORD_DIM, CHARACTER_FILTERS, PREDICATE_DIM = 100, 64, 100  # as in srl_baseline.jsonnet


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--output-dir", default="/tmp/srl_table", help="serialization dirs go here")
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=["baseline", "elmo"])
    parser.add_argument("--bilm-options", default="fixtures/elmo/options.json")
    parser.add_argument("--bilm-weights", default="fixtures/elmo/lm_weights.hdf5")
    parser.add_argument("--label-mode", choices=["span", "head"], default="span")
    parser.add_argument("--num-layers", type=int, default=2)
    parser.add_argument("--hidden-size", type=int, default=200)
    parser.add_argument("--num-epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--threads", type=int, default=1,
        help="torch threads; on a loaded 2-core machine one thread is fastest",
    )
    parser.add_argument(
        "--overrides", default="{}", help='extra AllenNLP overrides, e.g. \'{"trainer.patience": 2}\''
    )
    return parser.parse_args()


def elmo_dim(options_file: str) -> int:
    with open(options_file) as options:
        return 2 * json.load(options)["lstm"]["projection_dim"]


def overrides(args: argparse.Namespace, variant: str) -> Dict[str, object]:
    input_size = WORD_DIM + CHARACTER_FILTERS + PREDICATE_DIM
    settings: Dict[str, object] = {
        "dataset_reader.label_mode": args.label_mode,
        "model.label_mode": args.label_mode,
        "model.encoder.num_layers": args.num_layers,
        "model.encoder.hidden_size": args.hidden_size,
        "trainer.num_epochs": args.num_epochs,
        "data_loader.batch_sampler.batch_size": args.batch_size,
    }
    if variant == "elmo":
        elmo = "model.text_field_embedder.token_embedders.elmo."
        settings[elmo + "options_file"] = os.path.abspath(args.bilm_options)
        settings[elmo + "weight_file"] = os.path.abspath(args.bilm_weights)
        input_size += elmo_dim(args.bilm_options)
    settings["model.encoder.input_size"] = input_size
    settings.update(json.loads(args.overrides))
    return settings


def train(args: argparse.Namespace, variant: str) -> Dict[str, object]:
    serialization_dir = os.path.join(args.output_dir, variant)
    config = os.path.join("training_configs", "srl", VARIANTS[variant] + ".jsonnet")
    command = [
        sys.executable, "-m", "allennlp", "train", config,
        "-s", serialization_dir, "--force", "--include-package", "elmo_plugin",
        "-o", json.dumps(overrides(args, variant)),
    ]
    threads = str(args.threads)
    environment = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    log_path = os.path.join(args.output_dir, f"{variant}.log")
    start = time.time()
    with open(log_path, "w") as log:
        subprocess.run(
            command, cwd=PROJECT_ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT,
            check=True,
        )
    wall_clock = time.time() - start
    with open(os.path.join(serialization_dir, "metrics.json")) as metrics_file:
        metrics = json.load(metrics_file)
    bilm = (
        "none" if variant == "baseline"
        else f"{args.bilm_options} + {args.bilm_weights} (output dim {elmo_dim(args.bilm_options)})"
    )
    return {
        "variant": variant,
        "test_precision": metrics["test_precision-overall"],
        "test_recall": metrics["test_recall-overall"],
        "test_f1": metrics["test_f1-measure-overall"],
        "best_dev_f1": metrics["best_validation_f1-measure-overall"],
        "epochs": metrics["epoch"] + 1,
        "wall_clock_s": wall_clock,
        "bilm": bilm,
    }


def print_table(rows: List[Dict[str, object]]) -> None:
    print("| model | test P | test R | test F1 | best dev F1 | epochs | wall-clock | biLM |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| deep_srl {row['variant']} | {100 * row['test_precision']:.2f} | "
            f"{100 * row['test_recall']:.2f} | {100 * row['test_f1']:.2f} | "
            f"{100 * row['best_dev_f1']:.2f} | {row['epochs']} | "
            f"{row['wall_clock_s'] / 60:.1f} min | {row['bilm']} |",
            flush=True,
        )


def main() -> None:
    args = parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    print(
        f"label_mode={args.label_mode} num_layers={args.num_layers} "
        f"hidden_size={args.hidden_size} epochs={args.num_epochs} batch_size={args.batch_size} "
        f"threads={args.threads} overrides={args.overrides}",
        flush=True,
    )
    rows = []
    for variant in args.variants:
        rows.append(train(args, variant))
        print(json.dumps(rows[-1]), flush=True)
    with open(os.path.join(args.output_dir, "table.json"), "w") as table_file:
        json.dump(rows, table_file, indent=2)
    print_table(rows)


if __name__ == "__main__":
    main()
