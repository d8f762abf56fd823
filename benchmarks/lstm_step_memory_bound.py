"""
Why ELMo's "original" size (4096 cells, 512 projections) stays memory-bound at batch 32:
times one LSTM step's matrix products, both directions, for a few numbers of running rows.

Each step multiplies the running rows' hidden states by the recurrent weights of both
directions (2 x 512 x 16384 floats, 64 MB) and the memory cells by the projections
(2 x 4096 x 512, 16 MB). If the time barely grows with the rows, the step is paying for
reading the weights, not for arithmetic; the last column is the bandwidth that implies.

    python benchmarks/lstm_step_memory_bound.py [--threads 2] [--repeats 30]
"""

import argparse
import statistics
import time

import elmo_plugin.elmo  # noqa: F401  (the plugin's MKL setting, as in the embedding benchmark)
import torch
from common import header
from tests.published_sizes import published_options

ORIGINAL_LSTM = published_options("original")["lstm"]
CELLS, PROJECTION = ORIGINAL_LSTM["dim"], ORIGINAL_LSTM["projection_dim"]


def median_seconds(function, repeats: int) -> float:
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    recurrent = torch.randn(2, 4 * CELLS, PROJECTION).transpose(1, 2)  # column-major, as ours
    projection = torch.randn(2, CELLS, PROJECTION)
    bias = torch.randn(2, 1, 4 * CELLS)
    weight_bytes = 4 * (recurrent.numel() + projection.numel())
    print(
        f"{header('cpu', str(args.threads))}; weights read per step: {weight_bytes / 2**20:.0f} MB"
    )
    print("| running rows | recurrent ms | projection ms | step ms | weight bytes / step time |")
    print("|---|---|---|---|---|")
    for rows in (1, 8, 17, 32, 64):
        hidden = torch.randn(2, rows, PROJECTION)
        cells = torch.randn(2, rows, CELLS)
        with torch.no_grad():
            recurrent_s = median_seconds(
                lambda: torch.baddbmm(bias, hidden, recurrent), args.repeats
            )
            projection_s = median_seconds(lambda: torch.bmm(cells, projection), args.repeats)
        step = recurrent_s + projection_s
        print(
            f"| {rows} | {recurrent_s * 1e3:.2f} | {projection_s * 1e3:.2f} | {step * 1e3:.2f} | "
            f"{weight_bytes / step / 1e9:.1f} GB/s |"
        )


if __name__ == "__main__":
    main()
