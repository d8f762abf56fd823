"""`benchmarks/gpu_speed.py`, the one command a GPU machine runs (`gpu/gpu_check.sh`), at toy
sizes on the CPU: every default table, and the training step with and without the character
encoder's deduplication, come out with their rows, so that a GPU's few minutes are not spent
finding a broken script."""

import os
import subprocess
import sys

import pytest

from tests.paths import PROJECT_ROOT

# Trains, builds a wheel or runs AllenNLP in a process of its own: `make test-fast` leaves it out.
pytestmark = pytest.mark.slow

TABLES = {
    "## Embedding": "| small | 32 |",
    "## ElmoEmbedder.embed, sorted token budgets": "| small | 256 |",
    "## Training the paper's biLM": "| 4 | bfloat16, CUDA graphs, one optimizer group |",
    "## Inference sorted by length against dense": "| small | 32 | bfloat16 |",
    "## Training, bfloat16 with CUDA graphs, by character encoder": (
        "| 4 | every position, no host reads |"
    ),
}


def test_the_gpu_benchmark_runs_at_toy_sizes_on_the_cpu():
    result = subprocess.run(
        [sys.executable, "benchmarks/gpu_speed.py", "--device", "cpu", "--toy", "--parts"]
        + ["embedding", "embedder", "sorted", "training", "deduplication"],
        cwd=PROJECT_ROOT,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for title, row in TABLES.items():
        table = result.stdout.split(title, 1)[-1].split("\n## ", 1)[0]
        assert title in result.stdout and row in table, result.stdout
