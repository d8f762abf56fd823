"""
Training-epoch time and peak memory of `sst_elmo` (BCN + ELMo at the input, the shipped biLM)
with each training phrase's ELMo taken from its sentence (`phrases_in_context`, the config's
default) against ELMo of each phrase alone, on the phrases of the first sentences of the real
training set (../shared/data/sst/trees/train.txt):

    python benchmarks/sst_epoch_speed.py --sentences 600 --runs 3

Each run is a fresh process that builds the config's reader, vocabulary and model and trains
two epochs with its optimizer, batching and gradient clipping (no validation): epoch 1 runs the
biLM and fills the activation cache, epoch 2 reads it. The two variants alternate, run by run,
and the table gives medians: the CPU seconds of each epoch (all the process's threads, torch on
`--threads`; on a shared machine wall-clock mostly measures the other jobs, so it is printed
beside them in parentheses) and the process's peak resident memory.
"""

import argparse
import json
import os
import statistics
import tempfile
from typing import Any, Dict, List

from common import (
    ROOT,
    answer,
    cpu_model,
    header,
    peak_rss_mb,
    run_child,
    shared_data,
    timed_training_epochs,
)

CONFIG = os.path.join(ROOT, "training_configs", "sentiment", "sst_elmo.jsonnet")
VARIANTS = {"in context": True, "alone": False}


def timed_epochs(train: str, in_context: bool, num_epochs: int = 2) -> Dict[str, Any]:
    from allennlp.common import Params
    from allennlp.data import DatasetReader
    from allennlp.data.data_loaders import MultiProcessDataLoader

    import elmo_plugin.allennlp.tasks.sentiment  # noqa: F401

    params = Params.from_file(CONFIG, json.dumps({"dataset_reader.phrases_in_context": in_context}))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    loader = MultiProcessDataLoader.from_params(
        params.pop("data_loader"), reader=reader, data_path=train
    )
    epochs = timed_training_epochs(params, loader, num_epochs)
    return {"epochs": epochs, "peak_rss_mb": peak_rss_mb(), "batches": len(loader)}


def first_sentences(count: int, directory: str) -> str:
    """A file of the first `count` trees of SST's training set."""
    path = os.path.join(directory, "train.txt")
    with open(shared_data("sst", "trees", "train.txt"), encoding="utf-8") as trees:
        lines = [line for _, line in zip(range(count), trees)]
    with open(path, "w", encoding="utf-8") as head:
        head.writelines(lines)
    return path


def median_row(name: str, runs: List[Dict[str, Any]]) -> str:
    def median(epoch: int, which: int) -> float:
        return statistics.median(run["epochs"][epoch][which] for run in runs)

    memory = statistics.median(run["peak_rss_mb"] for run in runs)
    return (
        f"| {name} | {median(0, 0):.1f} ({median(0, 1):.1f}) | {median(1, 0):.1f} "
        f"({median(1, 1):.1f}) | {memory / 1024:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sentences", type=int, default=600)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        import torch

        torch.set_num_threads(args.threads)
        answer(timed_epochs(args.child, VARIANTS[os.environ["SST_VARIANT"]]))
        return
    runs: Dict[str, List[Dict[str, Any]]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        train = first_sentences(args.sentences, tmp)
        for _ in range(args.runs):
            for name in VARIANTS:
                environment = {**os.environ, "SST_VARIANT": name}
                child_arguments = ["--child", train, "--threads", str(args.threads)]
                runs[name].append(
                    run_child(os.path.abspath(__file__), *child_arguments, environment=environment)
                )
    batches = runs["in context"][0]["batches"]
    print(f"{header('cpu', str(args.threads))}; CPU {cpu_model()}")
    print(
        f"SST-5 train, the phrases of the first {args.sentences} sentences ({batches} batches "
        f"of 32); median of {args.runs} alternating runs; CPU seconds per training epoch "
        "(wall-clock seconds in parentheses); the shipped biLM"
    )
    print("| ELMo of each phrase | epoch 1 | epoch 2 (cached) | peak memory GB |")
    print("|---|---|---|---|")
    for name in VARIANTS:
        print(median_row(name, runs[name]), flush=True)


if __name__ == "__main__":
    main()
