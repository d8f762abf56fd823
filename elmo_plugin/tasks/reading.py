"""
What every task reader does with a file the same way: decode it line by line (a UTF-8 BOM
dropped, a bad byte named by file and line) and refuse a file that gives nothing to train on.
"""
import logging
from typing import Callable, Iterable, Iterator, List, Optional, TypeVar

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Longer than any real sentence (CoNLL-2003's longest has 124 tokens); what a file that lost its
# blank lines becomes is far longer, and costs time and memory that grow with the length.
DEFAULT_MAX_SENTENCE_LENGTH = 512

_BOM = "\ufeff"


def text_lines(file_path: str) -> Iterator[str]:
    """The lines of the UTF-8 text file `file_path` (a URL or a local path), without a
    leading BOM; a line that is not UTF-8 is a `ConfigurationError` naming file and line."""
    with open(cached_path(file_path), "rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ConfigurationError(
                    f"{file_path}, line {line_number}: not UTF-8 ({error.reason} at byte "
                    f"{error.start} of the line); expected UTF-8 text"
                ) from error
            yield line[1:] if line_number == 1 and line.startswith(_BOM) else line


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


def split_long(
    items: List[T], max_length: Optional[int], file_path: str, line_number: int, what: str = "sentence"
) -> List[List[T]]:
    """`items` in consecutive pieces of at most `max_length` (one piece when it is short enough
    or `max_length` is `None`); a split is logged as a warning naming the file and line."""
    if max_length is None or len(items) <= max_length:
        return [items]
    logger.warning(
        "%s, line %d: a %s of %d tokens, over the maximum of %d: split into %d pieces (a file "
        "that lost its blank lines?)", file_path, line_number, what, len(items), max_length,
        -(-len(items) // max_length),
    )
    return [items[start : start + max_length] for start in range(0, len(items), max_length)]
