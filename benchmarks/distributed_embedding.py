"""
ELMo past one process on the CPU: the same `--sentences` real sentences of
../shared/data/lm_wikipedia_en_2015/tokenized/valid.txt.xz, a biLM of the "small" published size
with random weights, top layer, embedded by

- `elmo-embed` under `torchrun --nproc-per-node 2` (gloo, one thread a rank), into one file;
- Ray Data, 2 actors of one CPU and one thread (docs/examples/ray_embed.py), into Parquet;
  once starting its own Ray, as the example does by default, and once joining a Ray of 2 CPUs
  already running (`--address`, as on a cluster; the Ray is started before the timing and
  stopped after it);
- PySpark `local[2]`, `mapInArrow` (docs/examples/spark_embed.py), into Parquet;

each the whole command's wall time (start-up included, as a user waits for it), alternating,
medians of `--runs`; and the engines' speed against `elmo-embed`'s. Each command also runs on the
first sentence alone, its start-up (engine, worker processes, biLM load, writing, shutdown): a
second line gives the speed with it taken off. `memory` measures the peak
resident memory of one worker (`ArrowEmbedder`, as an actor or executor runs it, blocks of 1,024
rows) on 1,000 and on 10,000 sentences.

    python benchmarks/distributed_embedding.py speed --sentences 2000 --runs 3
    python benchmarks/distributed_embedding.py memory --model fixture
"""

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple

from common import ROOT, cpu_model, read_sentences, shared_data, write_random_bilm

from tests.running_ray import running_ray

CORPUS = ("lm_wikipedia_en_2015", "tokenized", "valid.txt.xz")
RUNNING_RAY = "Ray Data, running Ray"
ADDRESS = "{address}"  # the running Ray's, known once it runs
EXAMPLES = os.path.join(ROOT, "docs", "examples")


def _commands(model: List[str], input_file: str, output: str) -> Dict[str, List[str]]:
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    options_weights = ["--options-file", model[0], "--weight-file", model[1]]
    return {
        "elmo-embed, torchrun 2": [
            torchrun,
            "--nproc-per-node",
            "2",
            "-m",
            "elmo_plugin.embedding.cli",
            input_file,
            f"{output}.hdf5",
            *options_weights,
            "--output-format",
            "top",
        ],
        "Ray Data, 2 actors": _example(
            "ray_embed.py", input_file, f"{output}-ray", model, "--actors", "2"
        ),
        RUNNING_RAY: _example(
            "ray_embed.py", input_file, f"{output}-running-ray", model, "--address", ADDRESS
        ),
        "Spark local[2]": _example(
            "spark_embed.py", input_file, f"{output}-spark", model, "--master", "local[2]"
        ),
    }


def _example(script: str, input_file: str, output: str, model: List[str], *flags: str) -> List[str]:
    """The command line of a docs/examples script embedding `input_file`'s top layer."""
    model_flags = ["--model", model[0], "--weight-file", model[1], "--output-format", "top"]
    return [
        sys.executable,
        os.path.join(EXAMPLES, script),
        input_file,
        output,
        *model_flags,
        *flags,
    ]


def _write_input(path: str, sentences: List[List[str]]) -> str:
    with open(path, "w") as out:
        out.write("\n".join(" ".join(s) for s in sentences) + "\n")
    return path


def _speed(arguments: argparse.Namespace, work: str) -> None:
    model = list(write_random_bilm("small", os.path.join(work, "model")))
    sentences = read_sentences(shared_data(*CORPUS), arguments.sentences)
    inputs = {
        "corpus": _write_input(os.path.join(work, "sentences.txt"), sentences),
        "start-up": _write_input(os.path.join(work, "one.txt"), sentences[:1]),
    }
    environment = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    times: Dict[Tuple[str, str], List[float]] = {}
    for run in range(arguments.runs):
        for kind, input_file in inputs.items():
            output = os.path.join(work, f"{kind}-{run}")
            for name, command in _commands(model, input_file, output).items():
                with running_ray(2) if name == RUNNING_RAY else contextlib.nullcontext("") as at:
                    command = [at if part == ADDRESS else part for part in command]
                    start = time.perf_counter()
                    done = subprocess.run(command, env=environment, cwd=ROOT, capture_output=True)
                    seconds = time.perf_counter() - start
                if done.returncode:
                    sys.exit(f"{name}: {done.stderr[-3000:].decode(errors='replace')}")
                times.setdefault((name, kind), []).append(seconds)
    print(f"CPU {cpu_model()}, {os.cpu_count()} CPUs; {len(sentences)} sentences, 'small' biLM")
    _report(times, "corpus", "the whole command, start-up included")
    beyond = {
        (name, "beyond"): [total - alone for total, alone in zip(measured, times[name, "start-up"])]
        for (name, kind), measured in times.items()
        if kind == "corpus"
    }
    print(
        "start-up (the same command on one sentence): "
        + ", ".join(
            f"{name} {statistics.median(measured):.1f} s"
            for (name, kind), measured in times.items()
            if kind == "start-up"
        )
    )
    _report(beyond, "beyond", "less the start-up")


def _report(times: Dict[Tuple[str, str], List[float]], kind: str, what: str) -> None:
    """One line an engine: the median of `kind`'s runs and its speed against elmo-embed's."""
    base = statistics.median(times["elmo-embed, torchrun 2", kind])
    print(f"{what}:")
    for (name, measured_kind), measured in times.items():
        if measured_kind != kind:
            continue
        median = statistics.median(measured)
        print(
            f"{name:>24}: {median:.1f} s (runs {[round(t, 1) for t in measured]}), "
            f"{base / median:.2f}x elmo-embed's speed"
        )


def _worker_peak(model: List[str], sentences: int) -> float:
    """Peak RSS (MB) of a fresh process embedding `sentences` in blocks as a worker does."""
    script = f"""
import resource, pyarrow
from common import read_sentences, shared_data
from elmo_plugin.embedding.arrow_embedding import ArrowEmbedder
lines = [" ".join(s) for s in read_sentences(shared_data(*{CORPUS!r}), {sentences})]
embedder = ArrowEmbedder({model[0]!r}, {model[1]!r}, output_format="top", threads=1)
for start in range(0, len(lines), 1024):
    embedder.embed_table(pyarrow.table({{"text": lines[start:start + 1024]}}))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""
    environment = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT}/benchmarks")
    done = subprocess.run(
        [sys.executable, "-c", script], env=environment, cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode:
        sys.exit(done.stderr[-3000:])
    return float(done.stdout.split()[-1])


def _memory(arguments: argparse.Namespace, work: str) -> None:
    model = (
        list(write_random_bilm("small", os.path.join(work, "model")))
        if arguments.model == "small"
        else [
            os.path.join(ROOT, "fixtures", "elmo", n) for n in ("options.json", "lm_weights.hdf5")
        ]
    )
    peaks = {count: _worker_peak(model, count) for count in (1000, 10000)}
    print(f"CPU {cpu_model()}; one worker (ArrowEmbedder, blocks of 1,024), {arguments.model} biLM")
    for count, peak in peaks.items():
        print(f"{count:>6} sentences: peak RSS {peak:.0f} MB")
    print(f"10,000 / 1,000: {peaks[10000] / peaks[1000]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("measure", choices=["speed", "memory"])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--model",
        choices=["small", "fixture"],
        default="small",
        help="memory: the biLM; the tiny test one (fixtures/elmo) measures what the pipeline "
        "holds as the input grows, fast",
    )
    arguments = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with tempfile.TemporaryDirectory() as work:
        if arguments.measure == "speed":
            _speed(arguments, work)
        else:
            _memory(arguments, work)


if __name__ == "__main__":
    main()
