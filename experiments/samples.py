"""The training sentences of sample_efficiency's runs: read in their task's file format, sampled
with a seed, written back in it."""

import os
import random
import re
from typing import Callable, Dict, List, NamedTuple

# A sample's file name: its task, percent of the sentences and seed, which fix its sentences.
SAMPLE_FILE = re.compile(r"(?P<task>\w+)_train_(?P<percent>[\d.]+)pct_seed(?P<seed>\d+)\.txt")


def sample_file_name(task: str, fraction: float, seed: int) -> str:
    return f"{task}_train_{100 * fraction:g}pct_seed{seed}.txt"


def conll_sentences(path: str) -> List[str]:
    """The sentences of a CoNLL-2003 file, each as its block of lines (no -DOCSTART-)."""
    with open(path, encoding="utf-8") as handle:
        blocks = [block.strip("\n") for block in handle.read().split("\n\n")]
    return [block for block in blocks if block and not block.startswith("-DOCSTART-")]


def line_sentences(path: str) -> List[str]:
    """The sentences of a file of one sentence a line (the SST trees), blank lines left out."""
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle if line.strip()]


class SentenceFormat(NamedTuple):
    """How a task's training file holds its sentences: read with `read`, written joined by
    `separator`."""

    read: Callable[[str], List[str]]
    separator: str


FORMATS: Dict[str, SentenceFormat] = {
    "conll": SentenceFormat(conll_sentences, "\n\n"),
    "lines": SentenceFormat(line_sentences, "\n"),
}


def sample_sentences(sentences: List[str], fraction: float, seed: int) -> List[str]:
    """`fraction` of the sentences (at least one), drawn with `seed`, in their original order."""
    count = sample_size(len(sentences), fraction)
    chosen = sorted(random.Random(seed).sample(range(len(sentences)), count))
    return [sentences[index] for index in chosen]


def sample_size(total: int, fraction: float) -> int:
    return max(1, round(fraction * total))


def write_sentences(sentences: List[str], path: str, file_format: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(FORMATS[file_format].separator.join(sentences) + "\n")
