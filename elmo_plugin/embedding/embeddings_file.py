"""
The one writer of AllenNLP 0.9's `allennlp elmo` hdf5 file (bilm-tf's `dump_bilm_embeddings`
layout), behind `ElmoEmbedder.embed_file` and the `elmo-embed` command: one float32 dataset per
line of a text file of whitespace-tokenised sentences, named by its 0-based line number (or by
its text), `(L + 1, num_tokens, dim)` or `(num_tokens, dim)` for `top` and `average`, and
`sentence_to_index`, a JSON map from each stripped line to its dataset name.

- The input is a path or URL (read as `text_lines` reads: UTF-8 checked, any line end; a pipe
  such as `/dev/stdin` or `<(...)` read once) or an open text file.
- The output is written beside itself and renamed onto it once complete
  (`replaced_when_complete`); an output that is the input is refused; the free disk space is
  checked before each batch is written (`require_space`).
- A sentence whose vectors are not finite stops with a `ConfigurationError` naming its line;
  empty lines give datasets of 0 tokens and one warning naming them.

It builds on the ELMo core's `atomic_files` and on `text_files`; the sentences are embedded by
the caller's function (`ElmoEmbedder.embed_batch`).
"""

import json
import logging
import os
import stat
from dataclasses import dataclass, field
from typing import IO, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import h5py
import numpy
import tqdm

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.atomic_files import (
    refuse_overwriting,
    replaced_when_complete,
    require_space,
)
from elmo_plugin.embedding.text_files import text_lines

logger = logging.getLogger(__name__)

OUTPUT_FORMATS = ("all", "top", "average")

InputFile = Union[str, "os.PathLike[str]", IO[str]]
# Tokenised sentences to each one's layers, `(L + 1, num_tokens, dim)`.
EmbedBatch = Callable[[List[List[str]]], List[numpy.ndarray]]
# `(line number from 0, stripped line)`.
Line = Tuple[int, str]


@dataclass
class _Written:
    """What has been written so far: the index, the empty lines (from 1), the line count."""

    index: Dict[str, str] = field(default_factory=dict)
    empty: List[int] = field(default_factory=list)
    count: int = 0


def write_embeddings(
    embed_batch: EmbedBatch,
    input_file: InputFile,
    output_file: str,
    output_format: str = "all",
    batch_size: int = 64,
    forget_sentences: bool = False,
    use_sentence_keys: bool = False,
) -> int:
    """
    Embeds each line of `input_file` with `embed_batch`, `batch_size` lines at a time, into the
    hdf5 file `output_file` (the layout above). Returns the number of lines.

    # Parameters

    embed_batch : `Callable[[List[List[str]]], List[numpy.ndarray]]`
        The layers of each tokenised sentence, `(L + 1, num_tokens, dim)`.
    input_file : `str`, `os.PathLike` or a text file object
    output_file : `str`
    output_format : `str`, optional (default = `"all"`)
        `"all"`, `"top"` or `"average"`.
    batch_size : `int`, optional (default = `64`)
    forget_sentences : `bool`, optional (default = `False`)
        Leave out `sentence_to_index`.
    use_sentence_keys : `bool`, optional (default = `False`)
        Name each dataset by its line's text instead (no `sentence_to_index`); a repeated
        line, or one holding `/` (a path in hdf5), is an error naming the line.
    """
    _check_arguments(output_format, batch_size)
    source = _input_name(input_file)
    refuse_overwriting(output_file, {"input file": source})
    written = _Written()
    with replaced_when_complete(output_file) as partial, h5py.File(partial, "w") as out:
        for batch in tqdm.tqdm(
            _batches(_lines(input_file), batch_size),
            desc="embedding batches",
            total=_count_batches(source, batch_size),
        ):
            layers = embed_batch([line.split() for _, line in batch])
            formatted = [_format(one, output_format) for one in layers]
            require_space(output_file, sum(one.nbytes for one in formatted))
            for line, sentence_layers in zip(batch, formatted):
                _write_sentence(out, line, sentence_layers, source, use_sentence_keys, written)
        if not (forget_sentences or use_sentence_keys):
            _write_index(out, written.index, output_file)
    _warn_about_empty(source, written)
    return written.count


def _input_name(input_file: InputFile) -> Optional[str]:
    """The path or URL of `input_file`, for messages; None for a file object without one."""
    if isinstance(input_file, (str, os.PathLike)):
        return os.fspath(input_file)
    name = getattr(input_file, "name", None)
    return name if isinstance(name, str) else None


def _check_arguments(output_format: str, batch_size: int) -> None:
    if output_format not in OUTPUT_FORMATS:
        raise ConfigurationError(
            f"output_format must be one of {OUTPUT_FORMATS}, got {output_format!r}"
        )
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ConfigurationError(f"batch_size must be a positive integer, got {batch_size!r}")


def _lines(input_file: InputFile) -> Iterator[Line]:
    """`(number from 0, stripped line)` of a path (read as `text_lines` reads) or of an open
    text file."""
    lines: Iterable[str] = (
        text_lines(os.fspath(input_file))
        if isinstance(input_file, (str, os.PathLike))
        else input_file
    )
    for number, line in enumerate(lines):
        yield number, line.strip()


def _batches(lines: Iterable[Line], batch_size: int) -> Iterator[List[Line]]:
    batch: List[Line] = []
    for line in lines:
        batch.append(line)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def _count_batches(source: Optional[str], batch_size: int) -> Optional[int]:
    """The number of batches in a regular file, for the progress bar; None for anything
    else (a pipe, `/dev/stdin`, `<(...)`, a URL, a file object), which can be read only once."""
    if source is None:
        return None
    try:
        regular = stat.S_ISREG(os.stat(source).st_mode)
    except OSError:
        return None
    if not regular:
        return None
    with open(source, "rb") as handle:
        return -(-sum(1 for _ in handle) // batch_size)


def _format(layers: numpy.ndarray, output_format: str) -> numpy.ndarray:
    if output_format == "top":
        return layers[-1]
    if output_format == "average":
        return layers.mean(axis=0)
    return layers


def _write_sentence(
    out: h5py.File,
    line: Line,
    layers: numpy.ndarray,
    source: Optional[str],
    use_sentence_keys: bool,
    written: _Written,
) -> None:
    number, text = line
    _check_finite(layers, source, number)
    key = _dataset_key(out, line, source, use_sentence_keys)
    out.create_dataset(key, data=layers, dtype="float32")
    written.index[text] = key
    written.count = number + 1
    if not text:
        written.empty.append(number + 1)


def _check_finite(layers: numpy.ndarray, source: Optional[str], number: int) -> None:
    bad = layers.size - int(numpy.isfinite(layers).sum())
    if bad:
        raise ConfigurationError(
            f"{source or 'the input'}, line {number + 1}: the biLM gave {bad} non-finite (NaN "
            "or infinite) values for this sentence: its weights, finite but too large, "
            "overflow in the compute dtype; nothing was written"
        )


def _dataset_key(out: h5py.File, line: Line, source: Optional[str], use_sentence_keys: bool) -> str:
    number, text = line
    if not use_sentence_keys:
        return str(number)
    where = f"{source or 'the input'}, line {number + 1}"
    if "/" in text or text in ("", ".", ".."):
        raise ConfigurationError(
            f"{where}: {text[:50]!r} cannot name an hdf5 dataset (a path there); "
            "use_sentence_keys=False names datasets by line number"
        )
    if text in out:
        raise ConfigurationError(
            f"{where} repeats an earlier line, which use_sentence_keys cannot name twice; "
            "use_sentence_keys=False names datasets by line number"
        )
    return text


def _write_index(out: h5py.File, index: Dict[str, str], output_file: str) -> None:
    index_json = json.dumps(index)
    require_space(output_file, len(index_json.encode("utf-8")))
    out.create_dataset("sentence_to_index", data=[index_json])


def _warn_about_empty(source: Optional[str], written: _Written) -> None:
    name = source or "the input"
    if not written.count:
        logger.warning("%s has no lines: the output holds no sentences", name)
    elif written.empty:
        logger.warning(
            "%s: %d empty lines (lines %s%s) get datasets of 0 tokens",
            name,
            len(written.empty),
            ", ".join(map(str, written.empty[:10])),
            ", ..." if len(written.empty) > 10 else "",
        )
