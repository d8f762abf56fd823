"""
Reading a language-model corpus: plain text, one tokenised sentence per line, in one file or
a glob of shards, each optionally compressed with xz, gzip or bzip2. Lines are streamed, never
the whole corpus, and every line is bounded in size so that a file without line breaks cannot
exhaust memory. Lines are decoded one at a time, so an error names the exact line.

Also the language model's constants, shared by the corpus reader, the corpus vocabulary, the
`bilm` model, the softmax file and the export: the sentence markers and bilm-tf's unknown
word, the targets' vocabulary namespace, the choices for long sentences and the line bound.
"""

import bz2
import glob
import gzip
import logging
import lzma
import os
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Tuple

from allennlp.common.file_utils import cached_path

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import SCHEME, package_path

logger = logging.getLogger(__name__)

# The markers around each sentence, and the unknown word, as bilm-tf wrote them in its
# vocabulary (AllenNLP's unknown word is `DEFAULT_OOV_TOKEN`).
SENTENCE_START = "<S>"
SENTENCE_END = "</S>"
BILM_TF_UNKNOWN = "<UNK>"
# The vocabulary namespace of the words the biLM predicts.
TARGET_NAMESPACE = "tokens"
# What becomes of a sentence over the most tokens: skipped, or split into pieces.
LONG_SENTENCES = ("skip", "split")
# Lines longer than this are skipped, read in bounded pieces.
MAX_LINE_BYTES = 1_000_000

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
    split_sentences: int = 0
    file_names: List[str] = field(default_factory=list)

    def summary(self) -> str:
        split = (
            f"; split {self.split_sentences} sentence(s) over the length limit into pieces"
            if self.split_sentences
            else ""
        )
        return (
            f"{self.sentences} sentences ({self.tokens} tokens) from {self.files} file(s); "
            f"skipped {self.blank_lines} empty or blank line(s), {self.long_lines} line(s) over "
            f"the byte limit and {self.long_sentences} sentence(s) over the length limit{split}"
        )


class _LongSentences:
    """The sentences of one file over `max_sentence_length`: skipped, or split into pieces
    of at most that many tokens, and reported in one warning per file."""

    def __init__(self, path: str, max_sentence_length: Optional[int], split: bool) -> None:
        self.path = path
        self.maximum = max_sentence_length
        self.split = split
        self.count = 0
        self.longest = (0, 0)  # (tokens, line number)

    def pieces(self, tokens: List[str], line_number: int) -> List[List[str]]:
        """`[tokens]` when within the maximum; else the pieces to keep (none when skipped)."""
        if self.maximum is None or len(tokens) <= self.maximum:
            return [tokens]
        self.count += 1
        self.longest = max(self.longest, (len(tokens), -line_number))
        if not self.split:
            return []
        return [tokens[i : i + self.maximum] for i in range(0, len(tokens), self.maximum)]

    def warn(self) -> None:
        if not self.count:
            return
        done = (
            f"split into pieces of at most {self.maximum} tokens, each read as a sentence"
            if self.split
            else "skipped; to keep them, raise max_sentence_length (null: no limit) or set "
            'the reader\'s long_sentences: "split"'
        )
        logger.warning(
            "%s: %d sentence(s) over max_sentence_length %d tokens (the longest %d tokens, "
            "line %d): %s",
            self.path,
            self.count,
            self.maximum,
            self.longest[0],
            -self.longest[1],
            done,
        )


def corpus_files(corpus: str) -> List[str]:
    """The files of `corpus`: a path, a URL, a file of the installed package
    (`elmo_plugin://training_configs/bilm/sample/...`, which a packaged config names so that it
    runs from any directory) or a glob such as `corpus/*.txt.xz`, sorted."""
    if corpus.startswith(SCHEME):
        corpus = package_path(corpus[len(SCHEME) :])
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
    max_line_bytes: int = MAX_LINE_BYTES,
    max_sentence_length: Optional[int] = None,
    split_long_sentences: bool = False,
) -> Iterator[List[str]]:
    """
    Yields the whitespace-separated tokens of each non-blank line of `files`, in order, and
    counts what it skips into `statistics`. A sentence over `max_sentence_length` is skipped,
    or with `split_long_sentences` yielded in pieces of at most that many tokens; either way
    each file's such sentences get one warning with their count and the longest. A file that
    cannot be read or decoded raises a `ConfigurationError` naming the file and line.
    """
    for path in files:
        statistics.files += 1
        statistics.file_names.append(path)
        long_sentences = _LongSentences(path, max_sentence_length, split_long_sentences)
        yield from _file_sentences(path, statistics, max_line_bytes, long_sentences)
        long_sentences.warn()


def _file_sentences(
    path: str, statistics: CorpusStatistics, max_line_bytes: int, long_sentences: _LongSentences
) -> Iterator[List[str]]:
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
                text = _decode(line, path, line_number)
                if line_number == 1 and text.startswith(_BOM):
                    text = text[1:]  # not whitespace to split(): it would start the first word
                tokens = text.split()
                if not tokens:
                    statistics.blank_lines += 1
                    continue
                pieces = long_sentences.pieces(tokens, line_number)
                _count_pieces(statistics, tokens, pieces)
                yield from pieces
    except (lzma.LZMAError, EOFError, gzip.BadGzipFile, OSError) as error:
        raise ConfigurationError(
            f"{path}, line {line_number + 1}: cannot decompress or read the file ({error}); "
            "is it truncated or not really compressed?"
        ) from error


def _count_pieces(statistics: CorpusStatistics, tokens: List[str], pieces: List[List[str]]) -> None:
    if not pieces:
        statistics.long_sentences += 1
    elif len(pieces) > 1:
        statistics.split_sentences += 1
    statistics.sentences += len(pieces)
    statistics.tokens += sum(len(piece) for piece in pieces)


_BOM = "\ufeff"


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
