"""Seconds for one forward + backward pass of the NER CRF's log-likelihood over one sentence of
1k / 2k / 4k tokens: AllenNLP's `ConditionalRandomField` (quadratic) and ours, `LinearTimeCrf`.

    OMP_NUM_THREADS=1 python benchmarks/crf_length.py
"""

import statistics
import time

import torch
from allennlp.modules import ConditionalRandomField

from common import header
from elmo_plugin.allennlp.tasks.ner.models.linear_time_crf import LinearTimeCrf

NUM_TAGS = 17  # CoNLL-2003 in BIOUL


def seconds(crf: torch.nn.Module, length: int, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        logits = torch.randn(1, length, NUM_TAGS, requires_grad=True)
        tags = torch.randint(NUM_TAGS, (1, length))
        start = time.perf_counter()
        crf(logits, tags).backward()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


if __name__ == "__main__":
    print(header("cpu", str(torch.get_num_threads())))
    for name, crf in (
        ("allennlp", ConditionalRandomField(NUM_TAGS)),
        ("linear_time", LinearTimeCrf(NUM_TAGS)),
    ):
        print(
            name, " ".join(f"{n}: {seconds(crf, n):.3f}s" for n in (1000, 2000, 4000)), flush=True
        )
