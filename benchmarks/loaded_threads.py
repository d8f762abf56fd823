"""
Our biLM against AllenNLP's `Elmo` on a busy 2-core machine: the speed ratio (theirs / ours)
at 1 thread on an idle other core, at 1 thread with the other core loaded, and at 2 threads
with the other core loaded (the aim: within 25% of the one-thread ratio, so that a loaded
machine costs the adaptive thread count little). The load is a busy loop in a child process
pinned to the last CPU of this process's affinity mask, started by this script; nothing else is
controlled, so run it on an otherwise quiet machine.

Same weights (a random biLM of the "small" published size), the first `--sentences` sentences
of ../shared/data/lm_wikipedia_en_2015/tokenized/valid.txt.xz in batches of `--batch-size`,
stateless runs, in one process; per condition the implementations alternate, one untimed pass
each first, medians of `--runs`. `ours` is the default, its recurrence at one thread or at
torch's count, whichever it measures faster (`elmo_plugin.elmo.execution.recurrence_threads`);
`ours, torch's threads` always at torch's count (`Execution(adaptive_threads=False)`), as before.

    python benchmarks/loaded_threads.py --sentences 200 --runs 5
"""

import argparse
import functools
import os
import subprocess
import sys
import tempfile
from typing import Any, Callable, Dict, List

from common import (
    alternating_times,
    cpu_model,
    header,
    medians_of,
    read_sentences,
    shared_data,
    write_random_bilm,
)

CORPUS = ("lm_wikipedia_en_2015", "tokenized", "valid.txt.xz")
BUSY_LOOP = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"


def _implementations(options: str, weights: str) -> Dict[str, Callable[[Any], Any]]:
    from allennlp.modules.elmo import Elmo as AllenNlpElmo

    from elmo_plugin.elmo import load_bilm
    from elmo_plugin.elmo.execution.settings import Execution

    elmo: Any = AllenNlpElmo(options, weights, 1, dropout=0.0).eval()
    theirs: Any = elmo._elmo_lstm
    ours = {
        "ours": load_bilm(options, weights).eval(),
        "ours, torch's threads": load_bilm(
            options, weights, execution=Execution(adaptive_threads=False)
        ).eval(),
    }

    def run_theirs(ids):
        theirs._elmo_lstm.reset_states()
        return theirs(ids)

    def fresh(bilm):
        def timed(ids):
            bilm.character_encoder.clear_cache()
            return bilm(ids)

        return timed

    return {"allennlp": run_theirs, **{name: fresh(bilm) for name, bilm in ours.items()}}


def _pass(run: Callable[[Any], Any], batches: List[Any]) -> None:
    import torch

    with torch.no_grad():
        for ids in batches:
            run(ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    import torch

    from elmo_plugin.elmo import batch_to_ids

    sentences = read_sentences(shared_data(*CORPUS), arguments.sentences)
    batches = [
        batch_to_ids(sentences[i : i + arguments.batch_size])
        for i in range(0, len(sentences), arguments.batch_size)
    ]
    other_cpu = sorted(os.sched_getaffinity(0))[-1]
    conditions = [("1 thread, idle", 1, False), ("1 thread, loaded", 1, True)]
    conditions.append(("2 threads, loaded", 2, True))
    with tempfile.TemporaryDirectory() as model_dir:
        runs = _implementations(*write_random_bilm("small", model_dir))
        results: Dict[str, Dict[str, float]] = {}
        for name, threads, loaded in conditions:
            torch.set_num_threads(threads)
            load = (
                subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(other_cpu)])
                if loaded
                else None
            )
            try:
                for run in runs.values():
                    _pass(run, batches[:1])
                passes = {key: functools.partial(_pass, run, batches) for key, run in runs.items()}
                times = alternating_times(passes, arguments.runs)
            finally:
                if load is not None:
                    load.kill()
                    load.wait()
            results[name] = medians_of(times)
    print(header("cpu", "as each row says") + f"; CPU {cpu_model()}")
    tokens = sum(len(s) for s in sentences)
    print(
        f"{len(sentences)} sentences ({tokens} tokens), batch {arguments.batch_size}, 'small' "
        f"biLM; medians of {arguments.runs} alternating runs; ratio = AllenNLP's time / ours"
    )
    baseline = results["1 thread, idle"]["allennlp"] / results["1 thread, idle"]["ours"]
    for name, medians in results.items():
        ratios = {k: medians["allennlp"] / v for k, v in medians.items() if k != "allennlp"}
        shown = ", ".join(
            f"{k} {v:.2f}x ({v / baseline:.0%} of idle 1-thread)" for k, v in ratios.items()
        )
        print(f"{name:>18}: AllenNLP {medians['allennlp']:.2f} s; {shown}")


if __name__ == "__main__":
    main()
