"""
Reading a language-model corpus: plain text, one tokenised sentence per line, in one file or
a glob of shards, each optionally compressed with xz, gzip or bzip2. Lines are streamed, never
the whole corpus, and every line is bounded in size so that a file without line breaks cannot
exhaust memory. Lines are decoded one at a time, so an error names the exact line.
"""

import bz2
import glob
import gzip
import logging
import lzma
import os
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path

logger = logging.getLogger(__name__)

# Each returns a binary file object (typeshed types them GzipFile, LZMAFile, BZ2File, not IO).
_OPENERS: Dict[str, Callable[..., Any]] = {
    ".xz": lzma.open,
    ".lzma": lzma.open,
    ".gz": gzip.open,
    ".bz2": bz2.open,
}
_GLOB_CHARACTERS = set("*?[")


@dataclass
class CorpusStatistics:
    """What a pass over a corpus saw. Skipped lines are counted, never silently dropped."""

    files: int = 0
    sentences: int = 0
    tokens: int = 0
    blank_lines: int = 0
    long_lines: int = 0
    long_sentences: int = 0
    file_names: List[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.sentences} sentences ({self.tokens} tokens) from {self.files} file(s); "
            f"skipped {self.blank_lines} empty or blank line(s), {self.long_lines} line(s) over "
            f"the byte limit and {self.long_sentences} sentence(s) over the length limit"
        )


def corpus_files(corpus: str) -> List[str]:
    """The files of `corpus`: a path, a URL or a glob such as `corpus/*.txt.xz`, sorted."""
    if _GLOB_CHARACTERS & set(corpus):
        matches = glob.glob(os.path.expanduser(corpus))
        files = sorted(path for path in matches if os.path.isfile(path))
        if not files:
            raise ConfigurationError(f"no files match the corpus pattern {corpus!r}")
        return files
    try:
        path = cached_path(corpus)
    except FileNotFoundError as error:
        raise ConfigurationError(f"corpus file {corpus!r} does not exist") from error
    if os.path.isdir(path):
        raise ConfigurationError(
            f"corpus {corpus!r} is a directory; give a file or a glob such as '{corpus}/*.txt'"
        )
    return [path]


def open_binary(path: str) -> IO[bytes]:
    """Opens `path` for reading bytes, decompressing by its extension."""
    opener: Callable[..., Any] = _OPENERS.get(os.path.splitext(path)[1].lower(), open)
    try:
        return opener(path, "rb")
    except OSError as error:
        raise ConfigurationError(f"cannot open corpus file {path}: {error}") from error


def _bounded_lines(handle: IO[bytes], max_bytes: int) -> Iterator[Tuple[bytes, bool]]:
    """Yields `(line, too_long)`; a line over `max_bytes` is consumed in pieces and yielded
    once, empty, with `too_long` set."""
    while True:
        line = handle.readline(max_bytes + 1)
        if not line:
            return
        if len(line) <= max_bytes or line.endswith(b"\n"):
            yield line, False
            continue
        while line and not line.endswith(b"\n"):
            line = handle.readline(max_bytes + 1)
        yield b"", True


def read_sentences(
    files: List[str],
    statistics: CorpusStatistics,
    max_line_bytes: int = 1_000_000,
    max_sentence_length: Optional[int] = None,
) -> Iterator[List[str]]:
    """
    Yields the whitespace-separated tokens of each non-blank line of `files`, in order, and
    counts what it skips into `statistics`. A file that cannot be read or decoded raises a
    `ConfigurationError` naming the file and line.
    """
    for path in files:
        statistics.files += 1
        statistics.file_names.append(path)
        line_number = 0
        try:
            with open_binary(path) as handle:
                for line_number, (line, too_long) in enumerate(
                    _bounded_lines(handle, max_line_bytes), start=1
                ):
                    if too_long:
                        statistics.long_lines += 1
                        logger.warning(
                            "%s, line %d: longer than %d bytes, skipped",
                            path,
                            line_number,
                            max_line_bytes,
                        )
                        continue
                    tokens = _decode(line, path, line_number).split()
                    if not tokens:
                        statistics.blank_lines += 1
                        continue
                    if max_sentence_length is not None and len(tokens) > max_sentence_length:
                        statistics.long_sentences += 1
                        continue
                    statistics.sentences += 1
                    statistics.tokens += len(tokens)
                    yield tokens
        except (lzma.LZMAError, EOFError, gzip.BadGzipFile, OSError) as error:
            raise ConfigurationError(
                f"{path}, line {line_number + 1}: cannot decompress or read the file ({error}); "
                "is it truncated or not really compressed?"
            ) from error


def _decode(line: bytes, path: str, line_number: int) -> str:
    if b"\x00" in line:
        raise ConfigurationError(
            f"{path}, line {line_number}: NUL bytes, so binary data, not text; expected one "
            "tokenised sentence per line"
        )
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigurationError(
            f"{path}, line {line_number}: not UTF-8 text ({error.reason} at byte {error.start} "
            "of the line); expected one tokenised sentence per line"
        ) from error


def check_not_empty(corpus: str, statistics: CorpusStatistics) -> None:
    if statistics.sentences == 0:
        raise ConfigurationError(
            f"corpus {corpus!r} has no sentences: {statistics.summary()}. Expected one "
            "tokenised sentence per line."
        )
