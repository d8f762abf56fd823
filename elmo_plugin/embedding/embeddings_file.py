"""
The one writer of AllenNLP 0.9's `allennlp elmo` hdf5 file (bilm-tf's `dump_bilm_embeddings`
layout), behind `ElmoEmbedder.embed_file` and the `elmo-embed` command: one float32 dataset per
line of a text file of whitespace-tokenised sentences, named by its 0-based line number (or by
its text), `(L + 1, num_tokens, dim)` or `(num_tokens, dim)` for `top` and `average`, and
`sentence_to_index`, a JSON map from each stripped line to its dataset name.

- The input is a path or URL (read as `text_lines` reads: UTF-8 checked, any line end; a pipe
  such as `/dev/stdin` or `<(...)` read once) or an open text file.
- The output is written beside itself and renamed onto it once complete
  (`replaced_when_complete`), in line order, the same bytes for the same layers; the free
  disk space is checked before each dataset is written (`require_space`).
- A sentence whose vectors are not finite stops with a `ConfigurationError` naming its line;
  empty lines give datasets of 0 tokens and one warning naming them; with sentence keys, a
  line that cannot name a dataset (holding `/` or NUL, empty, repeated) is an error before
  any work.

It builds on the ELMo core's `atomic_files` and on `text_files`; the sentences are embedded and
journaled by `elmo_plugin.embedding.bulk`.
"""

import json
import logging
import os
from typing import IO, Callable, Container, Dict, Iterable, Iterator, List, Optional, Set, Tuple
from typing import Union

import h5py
import numpy

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import replaced_when_complete, require_space
from elmo_plugin.embedding.text_files import text_lines

logger = logging.getLogger(__name__)

OUTPUT_FORMATS = ("all", "top", "average")

InputFile = Union[str, "os.PathLike[str]", IO[str]]
# `(line number from 0, stripped line)`.
Line = Tuple[int, str]


def read_lines(input_file: InputFile) -> List[Line]:
    """Every `(line number from 0, stripped line)` of `input_file`, read once."""
    return list(_lines(input_file))


def check_output_format(output_format: str) -> None:
    if output_format not in OUTPUT_FORMATS:
        raise ConfigurationError(
            f"output_format must be one of {OUTPUT_FORMATS}, got {output_format!r}"
        )


def check_sentence_keys(lines: List[Line], source: Optional[str]) -> None:
    """Before any work: every line can name its dataset (`use_sentence_keys`)."""
    seen: Set[str] = set()
    for line in lines:
        _dataset_key(line, source, True, seen)
        seen.add(line[1])


def format_layers(
    layers: numpy.ndarray, output_format: str, source: Optional[str], number: int
) -> numpy.ndarray:
    """A sentence's `(L + 1, num_tokens, dim)` layers in `output_format`, checked finite."""
    _check_finite(layers, source, number)
    if output_format == "top":
        return layers[-1]
    if output_format == "average":
        return layers.mean(axis=0)
    return layers


def write_hdf5(
    output_file: str,
    lines: List[Line],
    layers_of: Callable[[int], numpy.ndarray],
    source: Optional[str],
    forget_sentences: bool = False,
    use_sentence_keys: bool = False,
    dtype: str = "float32",
) -> None:
    """Writes the hdf5 file `output_file` (the layout above) in line order, each line's
    formatted layers from `layers_of(line number)`, stored as `dtype`: the same bytes for the
    same layers, however they were computed."""
    index: Dict[str, str] = {}
    with replaced_when_complete(output_file) as partial, h5py.File(partial, "w") as out:
        for line in lines:
            layers = layers_of(line[0])
            require_space(output_file, layers.nbytes)
            key = _dataset_key(line, source, use_sentence_keys, ())
            out.create_dataset(key, data=layers, dtype=dtype)
            index[line[1]] = key
        if not (forget_sentences or use_sentence_keys):
            _write_index(out, index, output_file)
    _warn_about_empty(source, lines)


def input_name(input_file: InputFile) -> Optional[str]:
    """The path or URL of `input_file`, for messages; None for a file object without one."""
    if isinstance(input_file, (str, os.PathLike)):
        return os.fspath(input_file)
    name = getattr(input_file, "name", None)
    return name if isinstance(name, str) else None


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


def _check_finite(layers: numpy.ndarray, source: Optional[str], number: int) -> None:
    bad = layers.size - int(numpy.isfinite(layers).sum())
    if bad:
        raise ConfigurationError(
            f"{source or 'the input'}, line {number + 1}: the biLM gave {bad} non-finite (NaN "
            "or infinite) values for this sentence: its weights, finite but too large, "
            "overflow in the compute dtype; nothing was written"
        )


def _dataset_key(
    line: Line, source: Optional[str], use_sentence_keys: bool, earlier: Container[str]
) -> str:
    number, text = line
    if not use_sentence_keys:
        return str(number)
    where = f"{source or 'the input'}, line {number + 1}"
    if "/" in text or "\0" in text or text in ("", ".", ".."):
        raise ConfigurationError(
            f"{where}: {text[:50]!r} cannot name an hdf5 dataset (a path there, and names end "
            "at a NUL character); use_sentence_keys=False names datasets by line number"
        )
    if text in earlier:
        raise ConfigurationError(
            f"{where} repeats an earlier line, which use_sentence_keys cannot name twice; "
            "use_sentence_keys=False names datasets by line number"
        )
    return text


def _write_index(out: h5py.File, index: Dict[str, str], output_file: str) -> None:
    index_json = json.dumps(index)
    require_space(output_file, len(index_json.encode("utf-8")))
    out.create_dataset("sentence_to_index", data=[index_json])


def _warn_about_empty(source: Optional[str], lines: List[Line]) -> None:
    name = source or "the input"
    empty = [number + 1 for number, text in lines if not text]
    if not lines:
        logger.warning("%s has no lines: the output holds no sentences", name)
    elif empty:
        logger.warning(
            "%s: %d empty lines (lines %s%s) get datasets of 0 tokens",
            name,
            len(empty),
            ", ".join(map(str, empty[:10])),
            ", ..." if len(empty) > 10 else "",
        )
