"""
`elmo-serve` under load, on the CPU, loopback only: a biLM of the "small" published size with
random weights, single real sentences of ../shared/data/lm_wikipedia_en_2015 (first
`--sentences`), sent one at a time by one client, then by 16 concurrent clients; throughput
(sentences/s) and the median latency of each, and their ratios. Then the ceiling of the
throughput ratio, the biLM alone on the server's thread: the same sentences one at a time and
in groups of 16 (alternating, group by group), and the server's 16-client throughput as a share
of the biLM's own in groups of 16. Bounded: `--sentences` requests a mode.

    python benchmarks/server_load.py --sentences 320 --runs 3
"""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from typing import Dict, List, Tuple

from common import cpu_model, read_sentences, shared_data, write_random_bilm

CORPUS = ("lm_wikipedia_en_2015", "tokenized", "valid.txt.xz")


async def _clients(client, sentences: List[str], concurrency: int) -> Tuple[float, List[float]]:
    queue = list(sentences)
    latencies: List[float] = []

    async def worker():
        while queue:
            sentence = queue.pop()
            start = time.perf_counter()
            response = await client.post("/embed", json={"sentences": [sentence]})
            await response.read()
            if response.status != 200:
                sys.exit(f"status {response.status}")
            latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start, latencies


async def _batching(client) -> Tuple[float, float]:
    """The server's counts so far: biLM runs (batches) and the requests they held."""
    text = await (await client.get("/metrics")).text()
    counts = dict(line.split() for line in text.splitlines())
    return float(counts["elmo_batches_total"]), float(counts["elmo_batched_requests_total"])


# Per measure ("rate", "p50", "requests" a biLM run, "alone": the biLM's rate without the
# server), per clients (or sentences a biLM call), one value a run.
Series = Dict[str, Dict[int, List[float]]]


async def _measure(embedder, thread, sentences: List[str], runs: int) -> Series:
    from aiohttp.test_utils import TestClient, TestServer

    from elmo_plugin.embedding.server import build_app

    series: Series = {measure: {1: [], 16: []} for measure in ("rate", "p50", "requests", "alone")}
    app = build_app({"small": embedder}, thread=thread)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        await _clients(client, sentences[:8], 1)  # warm-up
        loop = asyncio.get_running_loop()
        for run in range(runs):
            for concurrency in (1, 16) if run % 2 == 0 else (16, 1):
                batches, requests = await _batching(client)
                seconds, latencies = await _clients(client, sentences, concurrency)
                after = await _batching(client)
                series["rate"][concurrency].append(len(sentences) / seconds)
                series["p50"][concurrency].append(statistics.median(latencies))
                series["requests"][concurrency].append((after[1] - requests) / (after[0] - batches))
            # The biLM alone, on the app's thread (which the app shuts down as it stops).
            alone = await loop.run_in_executor(thread, _bilm_alone, embedder, sentences)
            for size, rate in alone.items():
                series["alone"][size].append(rate)
    return series


def _report(series: Series, sentences: int, runs: int) -> None:
    median = {
        measure: {k: statistics.median(v) for k, v in s.items()} for measure, s in series.items()
    }
    print(
        f"CPU {cpu_model()}; 'small' biLM (random weights), {sentences} single sentences; "
        f"medians of {runs} runs, alternating"
    )
    for concurrency in (1, 16):
        print(
            f"{concurrency:>2} clients: {median['rate'][concurrency]:.1f} sentences/s, "
            f"p50 latency {median['p50'][concurrency] * 1000:.0f} ms, "
            f"{median['requests'][concurrency]:.1f} requests a biLM run"
        )
    print(
        f"the biLM alone: {median['alone'][1]:.1f} sentences/s one at a time, "
        f"{median['alone'][16]:.1f} in groups of 16"
    )
    rate, p50, alone = series["rate"], series["p50"], series["alone"]
    _print_ratio("throughput, 16 clients / 1", rate[16], rate[1])
    _print_ratio("p50 latency, 16 clients / 1", p50[16], p50[1])
    _print_ratio("the biLM alone, groups of 16 / one at a time (the ceiling)", alone[16], alone[1])
    _print_ratio("16 clients' throughput / the biLM alone in groups of 16", rate[16], alone[16])


def _print_ratio(what: str, numerators: List[float], denominators: List[float]) -> None:
    ratios = [numerator / denominator for numerator, denominator in zip(numerators, denominators)]
    rounded = [round(ratio, 2) for ratio in ratios]
    print(f"{what}: {statistics.median(ratios):.2f}x (runs {rounded})")


def _bilm_alone(embedder, sentences: List[str]) -> Dict[int, float]:
    """Sentences a second of `embedder.embed_batch`, one sentence a call and 16 a call."""
    seconds = {1: 0.0, 16: 0.0}
    for start in range(0, len(sentences) - 15, 16):
        group = [sentence.split() for sentence in sentences[start : start + 16]]
        for size in (1, 16):
            begin = time.perf_counter()
            for batch in range(0, 16, size):
                embedder.embed_batch(group[batch : batch + size])
            seconds[size] += time.perf_counter() - begin
    count = len(sentences) // 16 * 16
    return {size: count / total for size, total in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=320)
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    from elmo_plugin.embedding.server import BilmThread

    with tempfile.TemporaryDirectory() as work:
        thread = BilmThread()  # the biLM written, loaded and run on one thread, as elmo-serve's
        embedder = thread.submit(_random_small_bilm, work).result()
        corpus = read_sentences(shared_data(*CORPUS), arguments.sentences)
        lines = [" ".join(sentence) for sentence in corpus]
        series = asyncio.run(_measure(embedder, thread, lines, arguments.runs))
        _report(series, len(lines), arguments.runs)


def _random_small_bilm(work: str):
    from elmo_plugin import ElmoEmbedder

    return ElmoEmbedder(*write_random_bilm("small", os.path.join(work, "model")))


if __name__ == "__main__":
    main()
