"""
Training-epoch time of the CoNLL-2003 NER tagger without and with ELMo, on a slice of the
real training set (../shared/data/conll2003/train.txt):

    python benchmarks/ner_epoch_speed.py --sentences 2000 --runs 3

Each run builds the model of `training_configs/ner/ner_baseline.jsonnet` or
`ner_elmo.jsonnet` (whose `elmo` embedder has the frozen-biLM activation cache on) and
trains it for two epochs with the configs' optimizer, batching and gradient clipping (no
validation). Epoch 1 of `+elmo` runs the biLM and fills the cache; epoch 2 reads the cache.
Epoch 1 of every variant also reads and indexes the data, so the ratio compares epoch 2s:
`+elmo epoch 2 / baseline epoch 2`. Reported times are medians over `--runs` runs.

Times are the process's CPU seconds (all its threads), with torch on `--threads` threads
(default 1): on a machine shared with other jobs, wall-clock time mostly measures the
other jobs. Wall-clock seconds are printed too.

The biLMs: the test fixture (`fixtures/elmo`, output dim 32), and, unless `--no-small`, a
randomly initialised biLM of the published "small" size (2x1024_128_2048cnn_1xhighway,
output dim 256) written to a temporary directory (speed does not depend on the weights).
"""

import argparse
import json
import os
import statistics
import tempfile
from typing import Dict, List, Optional, Tuple

import torch
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.data.samplers import BucketBatchSampler

import elmo_plugin.allennlp.tasks.ner  # noqa: F401
from common import ROOT, header, shared_data, timed_training_epochs, write_random_bilm

CONFIGS = os.path.join(ROOT, "training_configs", "ner")
FIXTURE_BILM = (
    os.path.join(ROOT, "fixtures", "elmo", "options.json"),
    os.path.join(ROOT, "fixtures", "elmo", "lm_weights.hdf5"),
)


def config(name: str, bilm: Optional[Tuple[str, str]]) -> Params:
    overrides: Dict = {}
    if bilm is not None:
        options, weights = bilm
        overrides = {
            "model.text_field_embedder.token_embedders.elmo.options_file": options,
            "model.text_field_embedder.token_embedders.elmo.weight_file": weights,
        }
    return Params.from_file(os.path.join(CONFIGS, name), json.dumps(overrides))


def timed_epochs(
    params: Params, train: str, num_sentences: int, num_epochs: int = 2
) -> List[Tuple[float, float]]:
    """(CPU seconds, wall-clock seconds) of each training epoch."""
    params["dataset_reader"]["max_instances"] = num_sentences
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    batch_size = params["data_loader"]["batch_sampler"]["batch_size"]
    loader = MultiProcessDataLoader(
        reader, train, batch_sampler=BucketBatchSampler(batch_size=batch_size)
    )
    return timed_training_epochs(params, loader, num_epochs)


def median_epochs(
    params_of, train: str, num_sentences: int, runs: int
) -> List[Tuple[float, float]]:
    per_run = [timed_epochs(params_of(), train, num_sentences) for _ in range(runs)]
    return [
        (
            statistics.median(run[e][0] for run in per_run),
            statistics.median(run[e][1] for run in per_run),
        )
        for e in range(len(per_run[0]))
    ]


def row(model: str, bilm: str, epochs: List[Tuple[float, float]], baseline_epoch_2: float) -> str:
    (cpu_1, wall_1), (cpu_2, wall_2) = epochs
    return (
        f"| {model} | {bilm} | {cpu_1:.1f} ({wall_1:.1f}) | {cpu_2:.1f} ({wall_2:.1f}) | "
        f"{cpu_2 / baseline_epoch_2:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-small", action="store_true", help="skip the small-size biLM")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    train = shared_data("conll2003", "train.txt")
    torch.manual_seed(0)
    bilms = {"fixture (dim 32)": FIXTURE_BILM}
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_small:
            bilms["small 2x1024_128_2048cnn (dim 256, random)"] = write_random_bilm("small", tmp)
        print(header("cpu", str(torch.get_num_threads())))
        print(
            f"CoNLL-2003 train, first {args.sentences} sentences; torch threads "
            f"{torch.get_num_threads()}; median of {args.runs} runs; CPU seconds per training "
            "epoch (wall-clock seconds in parentheses)"
        )
        baseline = median_epochs(
            lambda: config("ner_baseline.jsonnet", None), train, args.sentences, args.runs
        )
        print("| model | biLM | epoch 1 | epoch 2 | epoch 2 / baseline epoch 2 (CPU) |")
        print("|---|---|---|---|---|")
        print(row("baseline", "-", baseline, baseline[1][0]), flush=True)
        for name, bilm in bilms.items():
            elmo = median_epochs(
                lambda: config("ner_elmo.jsonnet", bilm), train, args.sentences, args.runs
            )
            print(row("+elmo (cache)", name, elmo, baseline[1][0]), flush=True)


if __name__ == "__main__":
    main()
