"""
What every task reader does with a file the same way (each decodes it with
`elmo_plugin.embedding.text_files.text_lines`): refuse a data file that does not exist with
the overrides that name others, refuse a file that gives nothing to train on, and split, cut
or skip an input over a maximum length with one warning naming where it is (a malformed file
must not make a run hang on one huge input).
"""

import logging
import os
from typing import Callable, Iterable, Iterator, List, Optional, Sized, TypeVar

from elmo_plugin.allennlp.data_paths import (
    DATA_OVERRIDES,
    DATA_VARIABLE,
    check_data_named,
    expected_files,
)
from elmo_plugin.elmo.errors import ConfigurationError

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Longer than any real sentence (the longest, in tokens: CoNLL-2003 124; UP English-EWT dev 75,
# test 81; SNLI dev premise 59, hypothesis 55; SQuAD v1.1 dev question 34); what a file that
# lost its blank lines becomes is far longer, and costs time and memory that grow with the length.
DEFAULT_MAX_SENTENCE_LENGTH = 512


def check_data_file(file_path: str) -> None:
    """A local `file_path` that does not exist is a `ConfigurationError` naming the path tried,
    the working directory it was relative to, the files the packaged configs expect and the
    overrides that name others (`elmo_plugin.allennlp.data_paths`). URLs are left to the download.
    """
    path = os.fspath(file_path)
    check_data_named(path)
    if "://" in path or os.path.isfile(os.path.expanduser(path)):
        return
    tried = os.path.abspath(os.path.expanduser(path))
    relative = "" if os.path.isabs(path) else f", relative to the working directory {os.getcwd()}"
    expected = expected_files(path)
    under = (
        f" The packaged configs read {', '.join(expected)} under {DATA_VARIABLE}="
        f"{os.environ.get(DATA_VARIABLE)}."
        if expected
        else ""
    )
    raise ConfigurationError(
        f"data file {path!r} not found (tried {tried}{relative}).{under} Name your files with "
        f"{DATA_OVERRIDES} (`allennlp train`), or in the config"
    )


def require_some(
    items: Iterable[T], file_path: str, what: str, why_none: Callable[[], str] = lambda: ""
) -> Iterator[T]:
    """Yields `items`; when there were none, raises a `ConfigurationError` naming `file_path`,
    `what` was expected and `why_none()` (e.g. how many were skipped and why), so an empty or
    unusable file stops a run before training instead of training on nothing.

    Readers wrap what they read before `shard_iterable`, so that the whole file is judged, not
    one worker's share of it."""
    count = 0
    for item in items:
        count += 1
        yield item
    if count == 0:
        reason = why_none()
        raise ConfigurationError(
            f"{file_path}: no {what} found{'; ' + reason if reason else ''}; "
            "expected at least one"
        )


def require_any(
    items: Iterable[T], gives_some: Callable[[T], bool], file_path: str, what: str
) -> Iterator[T]:
    """Yields `items`; when none of them `gives_some` (e.g. no sentence has a predicate, so
    the file gives no instance), raises a `ConfigurationError` naming `file_path` and `what`
    was expected. Wrapped around what a reader reads before `shard_iterable`, like
    `require_some`."""
    count = 0
    for item in items:
        count += 1 if gives_some(item) else 0
        yield item
    if count == 0:
        raise ConfigurationError(
            f"{file_path}: no {what} found, so nothing to read; expected at least one"
        )


def check_max_length(max_length: Optional[int], name: str) -> Optional[int]:
    """`max_length` when it is `None` or at least 1; otherwise a `ConfigurationError` naming
    the parameter `name`."""
    if max_length is not None and max_length < 1:
        raise ConfigurationError(f"{name} must be at least 1 or None, got {max_length}")
    return max_length


def _warn_long(where: str, what: str, length: int, max_length: int, action: str) -> None:
    """The one warning for an input over its maximum length: `where` (file and line, or file
    and record), `what` it is, its length and what was done with it."""
    logger.warning(
        "%s: a %s of %d tokens, over the maximum of %d: %s",
        where,
        what,
        length,
        max_length,
        action,
    )


def split_long(
    items: List[T],
    max_length: Optional[int],
    file_path: str,
    line_number: int,
    what: str = "sentence",
) -> List[List[T]]:
    """`items` in consecutive pieces of at most `max_length` (one piece when it is short enough
    or `max_length` is `None`); a split is logged as a warning naming the file and line."""
    if max_length is None or len(items) <= max_length:
        return [items]
    pieces = [items[start : start + max_length] for start in range(0, len(items), max_length)]
    action = f"split into {len(pieces)} pieces (a file that lost its blank lines?)"
    _warn_long(f"{file_path}, line {line_number}", what, len(items), max_length, action)
    return pieces


def truncate_long(
    items: List[T], max_length: Optional[int], where: str, what: str = "sentence"
) -> List[T]:
    """The first `max_length` of `items` (all of them when short enough or `max_length` is
    `None`); a cut is logged as a warning naming `where` (file and line, or file and record)."""
    if max_length is None or len(items) <= max_length:
        return items
    _warn_long(where, what, len(items), max_length, f"cut to its first {max_length}")
    return items[:max_length]


class LongSkipper:
    """Skips the inputs over `max_length` tokens (none when it is `None`), each with a warning
    naming the file and line, and counts them in `count` (from 0 at each `start`)."""

    def __init__(self, max_length: Optional[int], name: str = "max_sentence_length") -> None:
        self.max_length = check_max_length(max_length, name)
        self.name = name
        self.count = 0

    def start(self) -> None:
        self.count = 0

    def kept(
        self,
        items: Iterable[T],
        tokens: Callable[[T], Sized],
        first_line: Callable[[T], int],
        file_path: str,
        what: str = "sentence",
    ) -> Iterator[T]:
        """The `items` whose `tokens` are at most `max_length`; `first_line` gives an item's
        line in `file_path` for the warning."""
        for item in items:
            item_tokens = tokens(item)
            if self.max_length is None or len(item_tokens) <= self.max_length:
                yield item
                continue
            self.count += 1
            where = f"{file_path}, line {first_line(item)}"
            _warn_long(where, what, len(item_tokens), self.max_length, "skipped")

    def some_kept_sentences(
        self,
        sentences: Iterable[T],
        tokens: Callable[[T], Sized],
        first_line: Callable[[T], int],
        file_path: str,
    ) -> Iterator[T]:
        """The `sentences` `kept` from a new count, of which there must be some
        (`require_some`, naming how many were skipped when none was kept)."""
        self.start()
        kept = self.kept(sentences, tokens, first_line, file_path)
        return require_some(kept, file_path, "sentences", self.summary)

    def summary(self) -> str:
        """How many were skipped and why; empty when none was."""
        if not self.count:
            return ""
        return f"skipped {self.count} over {self.name}={self.max_length}"
