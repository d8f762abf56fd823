"""Progress of a long embedding job that a person can read in a log, one line per process."""

import logging
import time
from typing import Callable, Optional, Tuple

logger = logging.getLogger(__name__)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


class Progress:
    """
    Counts the sentences and tokens a process has embedded of its share and logs, at most
    every `interval` seconds and once at the end, e.g. `rank 0/2: 1,200/5,000 sentences (24%),
    30,000/120,000 tokens; 310 sentences/s, 7,800 tokens/s; about 0:00:12 left`, and
    at the end `... done in 0:01:40` (once: not again where the last line logged already says
    it). Work found done by an earlier run counts as done but not in the rates.

    # Parameters

    rank : `int`
    world_size : `int`
    sentences : `int`
        The sentences of this process's share.
    tokens : `int`
        Their tokens.
    interval : `float`, optional (default = `30.0`)
    clock : `Callable[[], float]`, optional (default = `time.monotonic`)
    name : `str`, optional (default = `"rank <rank>/<world_size>"`)
        What each line starts with.
    only_if_long : `bool`, optional (default = `False`)
        Log nothing until `interval` has passed, and no closing line for a job that ended
        before (a short call of a library function stays silent).
    """

    def __init__(
        self,
        rank: int,
        world_size: int,
        sentences: int,
        tokens: int,
        interval: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        name: Optional[str] = None,
        only_if_long: bool = False,
    ) -> None:
        self.name = name or f"rank {rank}/{world_size}"
        self.total_sentences, self.total_tokens = sentences, tokens
        self.sentences = self.tokens = 0
        self._resumed_sentences = self._resumed_tokens = 0
        self.interval = interval
        self._clock = clock
        self._start = clock()
        self._only_if_long = only_if_long
        self._last: Optional[float] = self._start if only_if_long else None
        self._logged_at: Optional[Tuple[int, int]] = None

    def resumed(self, sentences: int, tokens: int) -> None:
        """Work an earlier run did."""
        self.sentences += sentences
        self.tokens += tokens
        self._resumed_sentences += sentences
        self._resumed_tokens += tokens
        if sentences:
            logger.info("%s: %d sentences done by an earlier run, resuming", self.name, sentences)

    def advance(self, sentences: int, tokens: int) -> None:
        self.sentences += sentences
        self.tokens += tokens
        now = self._clock()
        if self._last is None or now - self._last >= self.interval:
            self._last = now
            self._log()

    def finish(self) -> None:
        if self._logged_at == (self.sentences, self.tokens):
            return
        if self._logged_at is not None or not self._only_if_long:
            self._log()

    def _log(self) -> None:
        self._logged_at = (self.sentences, self.tokens)
        logger.info("%s", self.line())

    def line(self) -> str:
        elapsed = max(self._clock() - self._start, 1e-9)
        token_rate = (self.tokens - self._resumed_tokens) / elapsed
        sentence_rate = (self.sentences - self._resumed_sentences) / elapsed
        left = self.total_tokens - self.tokens
        if not left:
            eta = f"done in {_duration(elapsed)}"
        elif token_rate:
            eta = f"about {_duration(left / token_rate)} left"
        else:
            eta = "time left unknown yet"
        percent = 100 * self.sentences / self.total_sentences if self.total_sentences else 100
        return (
            f"{self.name}: {self.sentences:,}/{self.total_sentences:,} sentences "
            f"({percent:.0f}%), {self.tokens:,}/{self.total_tokens:,} tokens; "
            f"{sentence_rate:,.0f} sentences/s, {token_rate:,.0f} tokens/s; {eta}"
        )
