"""
How many threads the CPU's LSTM recurrence runs with in inference: torch's thread count or one,
whichever is measured faster now.

Why measured: the packed path's steps are many small products and element-wise operations, each
a parallel region that waits for its slowest thread. On an idle machine two threads run them
faster than one; when another process holds one of the cores, every region waits for the thread
that shares it, and two threads ran the recurrence far slower than one (measured: 0.86x-4.2x
AllenNLP's `Elmo` at two threads on a loaded 2-core machine, against 6.7x at one). Which holds
changes as other jobs come and go, so neither count can be fixed in advance.

How: every `EXPLORE_EVERY`-th layer call (and the first `FIRST_EXPLORATIONS`) runs the layer
twice on the same batch, at both counts in alternating order, and the count that won most of
the last `VOTES` such races runs the calls between them. The race is on the same work, so batch
sizes do not bias it; it costs one extra layer run in `EXPLORE_EVERY`. The load is the
machine's, not a layer's: every layer of one shape and dtype in the process shares one chooser
(`chooser_for`), so a new biLM (a test, a short script) races only if none of its shape has.

The two runs must give the same bits, or the choice (and so the load of the machine) would show
in the numbers: the first race compares them, and a layer whose results differ (a BLAS that
splits its sums by thread count) stays at torch's count. Gradients never take this path (a
second run would build a second graph); training keeps torch's count.

torch's thread count is set for the calling thread, but MKL's is the process's: a program that
runs torch from several Python threads at once should set `Execution(adaptive_threads=False)`,
so that one biLM's switch does not change another thread's products.
"""

import collections
import contextlib
import time
from typing import Callable, Deque, Dict, Hashable, Iterator, Tuple, TypeVar

import torch

EXPLORE_EVERY = 32
FIRST_EXPLORATIONS = 2
VOTES = 3

Result = TypeVar("Result")


@contextlib.contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch's intra-op thread count set to `count` inside, restored after."""
    previous = torch.get_num_threads()
    if count == previous:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class RecurrenceThreads:
    """The thread count of one layer's recurrence, as the module says. `run(layer, same)` runs
    `layer()` at the chosen count; `same(a, b)` says whether two results are the same bits."""

    def __init__(self) -> None:
        self.calls = 0
        self.races = 0
        self.wins: Deque[int] = collections.deque(maxlen=VOTES)
        self.pinned = False
        self.timer: Callable[[], float] = time.perf_counter

    def chosen(self, threads: int) -> int:
        """The count that won most recent races (`threads` until one was run)."""
        if self.pinned or not self.wins:
            return threads
        ones = sum(1 for winner in self.wins if winner == 1)
        return 1 if 2 * ones > len(self.wins) else threads

    def run(self, layer: Callable[[], Result], same: Callable[[Result, Result], bool]) -> Result:
        threads = torch.get_num_threads()
        if threads == 1 or self.pinned:
            return layer()
        self.calls += 1
        if self.calls <= FIRST_EXPLORATIONS or self.calls % EXPLORE_EVERY == 0:
            return self._race(layer, same, threads)
        with torch_threads(self.chosen(threads)):
            return layer()

    def _race(
        self, layer: Callable[[], Result], same: Callable[[Result, Result], bool], threads: int
    ) -> Result:
        # Which count runs first alternates race by race (not call by call: the periodic
        # races fall on even calls), so that neither always finds the caches the other left.
        self.races += 1
        counts = (threads, 1) if self.races % 2 else (1, threads)
        timed = {count: self._timed(layer, count) for count in counts}
        (result, seconds), (other, other_seconds) = timed[threads], timed[1]
        if not same(result, other):
            self.pinned = True
            return result
        self.wins.append(1 if other_seconds < seconds else threads)
        return result

    def _timed(self, layer: Callable[[], Result], count: int) -> Tuple[Result, float]:
        with torch_threads(count):
            start = self.timer()
            result = layer()
            return result, self.timer() - start


def layer_result_equal(
    a: Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]],
    b: Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]],
) -> bool:
    """Whether two packed-layer results (outputs, (hidden, memory)) are the same bits."""
    return all(torch.equal(x, y) for x, y in zip((a[0], *a[1]), (b[0], *b[1])))


_CHOOSERS: Dict[Hashable, RecurrenceThreads] = {}


def chooser_for(shape: Hashable) -> RecurrenceThreads:
    """The process's chooser for the layers of one `shape` (their weights' shapes and dtype)."""
    return _CHOOSERS.setdefault(shape, RecurrenceThreads())
