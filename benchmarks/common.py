"""
What the benchmarks share: the corpora of ../shared/data, the first sentences of a corpus, a
random biLM of a published size, alternating timed runs and their medians, peak memory, child
processes that answer with one JSON line, and the header line naming the software, device and
threads a table comes from.

A benchmark runs as `python benchmarks/<name>.py` (this folder first on the path), so it
imports this module as `common`.
"""

import json
import lzma
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The benchmarks share the tests' helpers (tests/published_sizes.py: biLMs of the published
# sizes), importable as `tests.*` from the project root.
if ROOT not in sys.path:
    sys.path.insert(1, ROOT)
SHARED_DATA = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))


def shared_data(*parts: str) -> str:
    """A path under ../shared/data (beside the project root), which must exist."""
    path = os.path.join(SHARED_DATA, *parts)
    if not os.path.exists(path):
        sys.exit(
            f"{path} not found: this benchmark reads the corpora of ../shared/data, "
            "beside the project root"
        )
    return path


def read_sentences(path: str, count: int, max_length: Optional[int] = None) -> List[List[str]]:
    """The first `count` sentences of a tokenised corpus (one a line, `.xz` or plain text),
    skipping empty lines and, with `max_length`, sentences of more words."""
    sentences: List[List[str]] = []
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as corpus:
        for line in corpus:
            words = line.split()
            if words and (max_length is None or len(words) <= max_length):
                sentences.append(words)
            if len(sentences) == count:
                break
    return sentences


def write_random_bilm(size: str, directory: str) -> Tuple[str, str]:
    """A biLM of a published size ("small", "original") with random weights, in the bilm-tf
    format: its options and weight files."""
    import torch

    from elmo_plugin.elmo import ElmoBiLm, save_bilm
    from tests.published_sizes import published_options

    torch.manual_seed(0)
    bilm = ElmoBiLm.from_options(published_options(size))
    with torch.no_grad():
        for parameter in bilm.parameters():
            parameter.mul_(0.5)  # keep random activations away from the clipping bounds
    save_bilm(bilm, directory)
    return os.path.join(directory, "options.json"), os.path.join(directory, "weights.hdf5")


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, to stand beside every CPU speed figure."""
    with open("/proc/cpuinfo") as cpuinfo:
        names = [line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")]
    return names[0] if names else "unknown CPU"


def timed_training_epochs(
    params: Any, loader: Any, num_epochs: int = 2
) -> List[Tuple[float, float]]:
    """Builds the vocabulary and model of a task config's `params` (its dataset reader and
    data loader already popped into `loader`) and trains `num_epochs` epochs with the config's
    Adam learning rate, regularizer and gradient clipping (no validation): the (CPU seconds,
    wall-clock seconds) of each epoch."""
    import torch
    from allennlp.data import Vocabulary
    from allennlp.models import Model

    vocabulary = Vocabulary.from_params(params.pop("vocabulary"), instances=loader.iter_instances())
    loader.index_with(vocabulary)
    model = Model.from_params(vocab=vocabulary, params=params.pop("model"))
    trainer = params.pop("trainer")
    optimizer = torch.optim.Adam(
        [p for p in model.parameters() if p.requires_grad], lr=trainer["optimizer"]["lr"]
    )
    times = []
    for _ in range(num_epochs):
        model.train()
        start, start_cpu = time.perf_counter(), time.process_time()
        for batch in loader:
            optimizer.zero_grad()
            loss = model(**batch)["loss"]
            penalty = model.get_regularization_penalty()
            if penalty is not None:
                loss = loss + penalty
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), trainer["grad_norm"])
            optimizer.step()
        times.append((time.process_time() - start_cpu, time.perf_counter() - start))
    return times


def alternating_times(
    runs: Mapping[str, Callable[[], Any]], repeats: int
) -> Dict[str, List[float]]:
    """The wall-clock seconds of each of `runs`, called in turn (in the mapping's order),
    `repeats` times, so that a drift of the machine falls on all of them alike. Warm-ups, which
    differ from benchmark to benchmark, are the caller's."""
    times: Dict[str, List[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return times


def medians_of(times: Mapping[str, List[float]]) -> Dict[str, float]:
    return {name: statistics.median(values) for name, values in times.items()}


def peak_rss_mb() -> float:
    """This process's peak resident memory (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def start_child(
    script: str, *arguments: str, environment: Optional[Mapping[str, str]] = None
) -> subprocess.Popen:
    """`script` (a benchmark's own file) in a fresh Python process, in the project root; it
    answers with `answer` (its last line on stdout)."""
    return subprocess.Popen(
        [sys.executable, script, *arguments],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=None if environment is None else dict(environment),
    )


def child_result(child: subprocess.Popen) -> Dict[str, Any]:
    """The JSON object a child answered with, once it has finished."""
    output, _ = child.communicate()
    lines = output.strip().splitlines()
    if child.returncode != 0 or not lines:
        command = child.args if isinstance(child.args, list) else [child.args]
        raise SystemExit(
            f"{' '.join(map(str, command))}: exit {child.returncode}, "
            f"{'no answer' if not lines else 'last line: ' + lines[-1]}"
        )
    return json.loads(lines[-1])


def run_child(
    script: str, *arguments: str, environment: Optional[Mapping[str, str]] = None
) -> Dict[str, Any]:
    return child_result(start_child(script, *arguments, environment=environment))


def answer(result: Dict[str, Any]) -> None:
    """A child's side: its result as the last line of its stdout."""
    print(json.dumps(result), flush=True)


def header(device: str, threads: str) -> str:
    """The line naming what a benchmark's numbers come from; each adds its own settings."""
    import torch

    return (
        f"Python {platform.python_version()}, torch {torch.__version__}, device {device}; "
        f"threads: {threads}"
    )
