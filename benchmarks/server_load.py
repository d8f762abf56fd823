"""
`elmo-serve` under load, on the CPU, loopback only: a biLM of the "small" published size with
random weights, single real sentences of ../shared/data/lm_wikipedia_en_2015 (first
`--sentences`), sent one at a time by one client, then by 16 concurrent clients; throughput
(sentences/s) and the median latency of each, and their ratios. Bounded: `--sentences` requests
a mode.

    python benchmarks/server_load.py --sentences 320
"""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from typing import List, Tuple

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


async def _measure(embedder, sentences: List[str]) -> None:
    from aiohttp.test_utils import TestClient, TestServer

    from elmo_plugin.embedding.server import build_app

    async with TestClient(TestServer(build_app({"small": embedder}), host="127.0.0.1")) as client:
        await _clients(client, sentences[:8], 1)  # warm-up
        results, per_batch = {}, {}
        for concurrency in (1, 16):
            batches, requests = await _batching(client)
            results[concurrency] = await _clients(client, sentences, concurrency)
            after = await _batching(client)
            per_batch[concurrency] = (after[1] - requests) / (after[0] - batches)
    print(f"CPU {cpu_model()}; 'small' biLM (random weights), {len(sentences)} single sentences")
    for concurrency, (seconds, latencies) in results.items():
        print(
            f"{concurrency:>2} clients: {len(sentences) / seconds:.1f} sentences/s, "
            f"p50 latency {statistics.median(latencies) * 1000:.0f} ms, "
            f"{per_batch[concurrency]:.1f} requests a biLM run"
        )
    one, many = results[1], results[16]
    print(
        f"throughput 16 / 1: {one[0] / many[0]:.2f}x; p50 latency 16 / 1: "
        f"{statistics.median(many[1]) / statistics.median(one[1]):.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=320)
    arguments = parser.parse_args()
    from elmo_plugin import ElmoEmbedder

    with tempfile.TemporaryDirectory() as work:
        options, weights = write_random_bilm("small", os.path.join(work, "model"))
        embedder = ElmoEmbedder(options, weights)
        corpus = read_sentences(shared_data(*CORPUS), arguments.sentences)
        asyncio.run(_measure(embedder, [" ".join(sentence) for sentence in corpus]))


if __name__ == "__main__":
    main()
