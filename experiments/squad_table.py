"""
SQuAD v1.1 results in the shape of the ELMo paper's Table 3 rows for SQuAD (BiDAF with and
without ELMo), on the fixed splits of ../shared/data: train = the first 38 articles of the
official dev file (8,582 questions), test = its last 10 articles (1,988 questions).

Each row trains one `training_configs/squad/` config with `allennlp train` in a fresh process
(so the wall-clock includes start-up, reading, vocabulary, training and the test evaluation)
with the sizes and budget given here, then prints the test EM/F1 (official v1.1 scoring), the
wall-clock and the biLM used. There is no dev split: every row trains a fixed number of epochs
and is scored once on test, so nothing is tuned or selected on test. Run from the project root:

    python experiments/squad_table.py --output-dir /tmp/squad_table
    python experiments/squad_table.py --variants baseline elmo elmo_input_output \
        --bilm-options /models/elmo/options.json --bilm-weights /models/elmo/weights.hdf5 \
        --hidden-size 100 --num-epochs 10 --passage-length-limit 400

The defaults fit 2 shared CPU cores (at most about 15 minutes a row, one torch thread each):
a BiDAF with 30-unit LSTMs, trained one epoch on passages cut at 200 tokens.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = {
    "baseline": "squad_baseline",
    "elmo": "squad_elmo",
    "elmo_output": "squad_elmo_output",
    "elmo_input_output": "squad_elmo_input_output",
}
EMBEDDERS = "model.text_field_embedder.token_embedders"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--output-dir", default="/tmp/squad_table", help="serialization dirs go here")
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=["baseline", "elmo"])
    parser.add_argument("--bilm-options", default="fixtures/elmo/options.json")
    parser.add_argument("--bilm-weights", default="fixtures/elmo/lm_weights.hdf5")
    parser.add_argument("--hidden-size", type=int, default=30, help="every LSTM, per direction")
    parser.add_argument("--word-dim", type=int, default=50)
    parser.add_argument("--char-filters", type=int, default=50)
    parser.add_argument("--num-epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--passage-length-limit", type=int, default=200, help="training passages only")
    parser.add_argument("--train-max-instances", type=int, default=None)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per training run")
    parser.add_argument("--overrides", default="{}", help="extra AllenNLP overrides (JSON)")
    return parser.parse_args()


def row_overrides(args: argparse.Namespace, variant: str) -> Dict[str, Any]:
    overrides: Dict[str, Any] = {
        f"{EMBEDDERS}.tokens.embedding_dim": args.word_dim,
        f"{EMBEDDERS}.token_characters.encoder.num_filters": args.char_filters,
        "model.phrase_layer.hidden_size": args.hidden_size,
        "model.modeling_layer.hidden_size": args.hidden_size,
        "model.span_end_encoder.hidden_size": args.hidden_size,
        "dataset_reader.passage_length_limit": args.passage_length_limit,
        "data_loader.batch_sampler.batch_size": args.batch_size,
        "trainer.num_epochs": args.num_epochs,
    }
    if args.train_max_instances is not None:
        overrides["dataset_reader.max_instances"] = args.train_max_instances
    if variant != "baseline":
        overrides["model.elmo.options_file"] = os.path.abspath(args.bilm_options)
        overrides["model.elmo.weight_file"] = os.path.abspath(args.bilm_weights)
    overrides.update(json.loads(args.overrides))
    return overrides


def bilm_description(args: argparse.Namespace) -> str:
    with open(args.bilm_options) as options_file:
        lstm = json.load(options_file)["lstm"]
    return (
        f"{args.bilm_weights} ({lstm['n_layers']} layers, {lstm['dim']} cells, "
        f"output dim {2 * lstm['projection_dim']})"
    )


def train(args: argparse.Namespace, variant: str) -> Dict[str, Any]:
    serialization_dir = os.path.join(args.output_dir, variant)
    config = os.path.join("training_configs", "squad", VARIANTS[variant] + ".jsonnet")
    command = [
        sys.executable, "-m", "allennlp", "train", config, "-s", serialization_dir, "--force",
        "--include-package", "elmo_plugin", "-o", json.dumps(row_overrides(args, variant)),
    ]
    environment = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    log_path = os.path.join(args.output_dir, f"{variant}.log")
    start = time.time()
    with open(log_path, "w") as log:
        subprocess.run(
            command, cwd=PROJECT_ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT, check=True
        )
    wall_clock = time.time() - start
    with open(os.path.join(serialization_dir, "metrics.json")) as metrics_file:
        metrics = json.load(metrics_file)
    return {
        "variant": variant,
        "test_em": metrics["test_em"],
        "test_f1": metrics["test_f1"],
        "training_loss": metrics["training_loss"],
        "epochs": metrics["epoch"] + 1,
        "wall_clock_s": wall_clock,
        "bilm": "none" if variant == "baseline" else bilm_description(args),
    }


def print_table(rows: List[Dict[str, Any]]) -> None:
    print("| model | test EM | test F1 | epochs | wall-clock | biLM |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| BiDAF {row['variant']} | {100 * row['test_em']:.1f} | {100 * row['test_f1']:.1f} | "
            f"{row['epochs']} | {row['wall_clock_s'] / 60:.1f} min | {row['bilm']} |",
            flush=True,
        )


def main() -> None:
    args = parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    print(
        f"hidden_size={args.hidden_size} word_dim={args.word_dim} char_filters={args.char_filters} "
        f"epochs={args.num_epochs} batch_size={args.batch_size} "
        f"passage_length_limit={args.passage_length_limit} "
        f"train_max_instances={args.train_max_instances} threads={args.threads} "
        f"overrides={args.overrides}",
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
