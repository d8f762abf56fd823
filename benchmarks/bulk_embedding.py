"""
Bulk embedding (`elmo-embed`, `elmo_plugin.embedding.bulk`) on the CPU, three measurements:

- `order`: sentences sorted by length into batches against batches in file order, both at
  `--batch-size` sentences (64) within the same token budget (`max_tokens`, 4096), on the first
  `--sentences` real sentences of ../shared/data/lm_wikipedia_en_2015/tokenized/valid.txt.xz,
  a biLM of the "small" published size with random weights; the two alternate in one process
  (one untimed warm-up pass first), medians of `--runs`, the same layers checked. `--path
  dense` runs the LSTM on the fused dense path (`Execution(fused=True)`, padding computed, as
  on a GPU) instead of the CPU's default packed path (each step only the running sentences).
- `seqvec`: SeqVec-shaped input (sequences of 50 to 5,000 one-character tokens, drawn uniformly
  with seed 0; `--sequences` of them, 10,000 as a SeqVec user embeds, fewer where time forbids)
  through the `elmo-embed` command in a fresh process, its peak resident memory against the
  bound of `--max-tokens` and the same input with no budget (every sequence one run; left out
  with `--no-unbounded`, for samples too large to hold in one run). `--model fixture` takes the
  tiny test biLM (fixtures/elmo) instead of "small", fast enough for all 10,000 sequences: it
  measures what the pipeline itself holds (input, plan, index, output buffers) as the input
  grows, which the model's size does not change.
- `processes`: the `elmo-embed` command in 1 process and under `torchrun --nproc-per-node 2`
  (gloo), the embedding time of the slowest rank from its last progress line, alternating,
  medians, and whether the two outputs are the same bytes.

    python benchmarks/bulk_embedding.py order --sentences 2000 --runs 3
    python benchmarks/bulk_embedding.py order --sentences 2000 --runs 3 --cuda-device 0
    python benchmarks/bulk_embedding.py order --sentences 640 --runs 3 --path dense
    python benchmarks/bulk_embedding.py seqvec --sequences 40
    python benchmarks/bulk_embedding.py seqvec --sequences 10000 --model fixture --no-unbounded
    python benchmarks/bulk_embedding.py processes --sentences 1000 --runs 3
"""

import argparse
import filecmp
import functools
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Tuple

from common import (
    ROOT,
    alternating_times,
    cpu_model,
    header,
    read_sentences,
    shared_data,
    write_random_bilm,
)

CORPUS = ("lm_wikipedia_en_2015", "tokenized", "valid.txt.xz")
AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
# The LSTM paths of `order`: the device's default, or the fused dense one (padding computed).
PATHS: Dict[str, Any] = {"default": "auto", "dense": {"fused": True}}
FIXTURE_BILM = (
    os.path.join(ROOT, "fixtures", "elmo", "options.json"),
    os.path.join(ROOT, "fixtures", "elmo", "lm_weights.hdf5"),
)


def _order(arguments: argparse.Namespace, model_dir: str) -> None:
    import numpy
    import torch

    from elmo_plugin import ElmoEmbedder
    from elmo_plugin.embedding.bulk import embed_planned_batch, plan_batches

    sentences = read_sentences(shared_data(*CORPUS), arguments.sentences)
    embedder = ElmoEmbedder(
        *write_random_bilm("small", model_dir),
        cuda_device=arguments.cuda_device,
        execution=PATHS[arguments.path],
    )
    lengths = [len(s) for s in sentences]
    plans = {
        order: plan_batches(lengths, arguments.batch_size, embedder.max_tokens, order == "sorted")
        for order in ("sorted", "file order")
    }

    results: Dict[str, List[numpy.ndarray]] = {}

    def run(order: str) -> None:
        embedder.elmo_bilm.character_encoder.clear_cache()
        layers: List[numpy.ndarray] = [numpy.zeros(0)] * len(sentences)
        for batch in plans[order]:
            embedded = embed_planned_batch(embedder, [sentences[i] for i in batch])
            for line, one in zip(batch, embedded):
                layers[line] = one
        results[order] = layers

    run("sorted")  # warm-up
    times = alternating_times(
        {order: functools.partial(run, order) for order in plans}, arguments.runs
    )
    worst = max(
        float(abs(a - b).max()) for a, b in zip(results["sorted"], results["file order"]) if a.size
    )
    device = "cpu" if arguments.cuda_device < 0 else torch.cuda.get_device_name(0)
    print(header(device, str(torch.get_num_threads())) + f"; CPU {cpu_model()}")
    print(
        f"{len(sentences)} sentences, {sum(lengths)} tokens, batch size {arguments.batch_size}, "
        f"max_tokens {embedder.max_tokens}, 'small' biLM, LSTM path {arguments.path}; medians "
        f"of {arguments.runs} runs"
    )
    for order, measured in times.items():
        median = statistics.median(measured)
        print(
            f"{order:>10}: {len(plans[order])} runs planned, {median:.2f} s, "
            f"{sum(lengths) / median:,.0f} tokens/s"
        )
    speedup = statistics.median(times["file order"]) / statistics.median(times["sorted"])
    print(f"sorted / file order speed: {speedup:.2f}x; largest difference {worst:.1e}")


def _write_seqvec_input(path: str, count: int) -> int:
    random.seed(0)
    tokens = 0
    with open(path, "w") as out:
        for _ in range(count):
            length = random.randint(50, 5000)
            tokens += length
            out.write(" ".join(random.choice(AMINO_ACIDS) for _ in range(length)) + "\n")
    return tokens


def _command(
    model_files: Tuple[str, str], input_file: str, output_file: str, *extra: str
) -> Tuple[List[str], dict]:
    options, weights = model_files
    arguments = [input_file, output_file, "--options-file", options, "--weight-file", weights]
    return arguments + list(extra), dict(os.environ, PYTHONPATH=ROOT)


def _peak_of_command(arguments: List[str], environment: dict) -> Tuple[float, float]:
    """Peak resident MB and wall seconds of `elmo-embed arguments` in a fresh process."""
    probe = (
        "import resource, sys, time; from elmo_plugin.embedding import cli; t = time.time(); "
        "cli.main(sys.argv[1:]); print('RESULT', time.time() - t, "
        "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe, *arguments],
        env=environment,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    _, seconds, peak = output.strip().splitlines()[-1].split()
    return float(peak), float(seconds)


def _seqvec(arguments: argparse.Namespace, model_dir: str, work: str) -> None:
    import torch

    model_files = FIXTURE_BILM
    if arguments.model == "small":
        model_files = write_random_bilm("small", model_dir)
    input_file = os.path.join(work, "seqvec.txt")
    tokens = _write_seqvec_input(input_file, arguments.sequences)
    print(header("cpu", str(torch.get_num_threads())) + f"; CPU {cpu_model()}")
    print(
        f"{arguments.sequences} sequences of 50-5,000 one-character tokens ({tokens:,} tokens), "
        f"'{arguments.model}' biLM, output format {arguments.output_format}"
    )
    budgets = [str(arguments.max_tokens)] + ([] if arguments.no_unbounded else [str(10**9)])
    for budget in budgets:
        command, environment = _command(
            model_files,
            input_file,
            os.path.join(work, f"out-{budget}.hdf5"),
            "--max-tokens",
            budget,
            "--output-format",
            arguments.output_format,
        )
        peak, seconds = _peak_of_command(command, environment)
        label = f"--max-tokens {budget}" if budget != str(10**9) else "no budget (whole runs)"
        print(
            f"{label:>24}: peak RSS {peak:,.0f} MB, {seconds:.0f} s, "
            f"{tokens / seconds:,.0f} tokens/s"
        )


def _embedding_seconds(output: str) -> float:
    """The slowest rank's embedding time from the last progress lines ("done in H:MM:SS")."""
    found = [
        int(h) * 3600 + int(m) * 60 + int(s)
        for h, m, s in re.findall(r"done in (\d+):(\d\d):(\d\d)", output)
    ]
    return float(max(found))


def _processes(arguments: argparse.Namespace, model_dir: str, work: str) -> None:
    import torch

    model_files = write_random_bilm("small", model_dir)
    sentences = read_sentences(shared_data(*CORPUS), arguments.sentences)
    input_file = os.path.join(work, "sentences.txt")
    with open(input_file, "w") as out:
        out.write("\n".join(" ".join(s) for s in sentences) + "\n")
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    launchers = {
        "1 process": [sys.executable, "-m", "elmo_plugin.embedding.cli"],
        "2 processes": [torchrun, "--nproc-per-node", "2", "-m", "elmo_plugin.embedding.cli"],
    }
    times: Dict[str, List[float]] = {name: [] for name in launchers}
    for run in range(arguments.runs):
        for name, launcher in launchers.items():
            output_file = os.path.join(work, f"{name[0]}-{run}.hdf5")
            command, environment = _command(model_files, input_file, output_file)
            done = subprocess.run(
                launcher + command, env=environment, cwd=ROOT, capture_output=True, text=True
            )
            if done.returncode:
                sys.exit(done.stderr[-3000:])
            times[name].append(_embedding_seconds(done.stderr))
    same = filecmp.cmp(
        os.path.join(work, "1-0.hdf5"), os.path.join(work, "2-0.hdf5"), shallow=False
    )
    print(
        header("cpu", f"{torch.get_num_threads()} in 1 process, 1 each in 2")
        + f"; CPU {cpu_model()}"
    )
    print(f"{len(sentences)} sentences, 'small' biLM, medians of {arguments.runs} runs")
    for name, measured in times.items():
        print(
            f"{name:>12}: {statistics.median(measured):.0f} s embedding (slowest rank) {measured}"
        )
    ratio = statistics.median(times["1 process"]) / statistics.median(times["2 processes"])
    print(f"2 processes / 1 process speed: {ratio:.2f}x; outputs byte-identical: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("measure", choices=["order", "seqvec", "processes"])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--sequences", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=4096)
    parser.add_argument("--output-format", default="average")
    parser.add_argument(
        "--model", choices=["small", "fixture"], default="small", help="seqvec: the biLM"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--cuda-device", type=int, default=-1, help="order: embed on this GPU (its dense path)"
    )
    parser.add_argument(
        "--path", choices=sorted(PATHS), default="default", help="order: the LSTM's path"
    )
    parser.add_argument(
        "--no-unbounded",
        action="store_true",
        help="seqvec: skip the run with no budget (its memory grows with the sequences)",
    )
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        model_dir = os.path.join(work, "bilm")
        os.makedirs(model_dir)
        if arguments.measure == "order":
            _order(arguments, model_dir)
        elif arguments.measure == "seqvec":
            _seqvec(arguments, model_dir, work)
        else:
            _processes(arguments, model_dir, work)


if __name__ == "__main__":
    main()
