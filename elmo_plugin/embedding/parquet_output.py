"""
`elmo-embed`'s output as Parquet (Arrow), what Ray Data and Spark jobs read and write: one row
per input line, in line order, with the columns `line` (its number from 0), `sentence` (the
stripped line; left out with `forget_sentences`) and `embedding`, the line's array as nested
lists: the token axis a list (its length the sentence's), every other axis a fixed-size list,
e.g. `fixed_size_list<list<fixed_size_list<float, dim>>, L + 1>` for all the layers and
`fixed_size_list<float, dim>` for a pooled vector. `row_array` turns a row back into the numpy
array it was written from, bit for bit.
"""

from typing import Callable, Iterator, List, Optional, Sequence, Tuple

import numpy

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import replaced_when_complete, require_space
from elmo_plugin.embedding.embeddings_file import Line

LINE_COLUMN = "line"
SENTENCE_COLUMN = "sentence"
EMBEDDING_COLUMN = "embedding"
# Rows of one row group: a bounded write buffer, and the unit a reader may skip to.
ROWS_PER_GROUP = 1024


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401 - makes pyarrow.parquet an attribute
    except ImportError as error:
        raise ConfigurationError(
            "Parquet output needs pyarrow: pip install 'elmo_plugin[parquet]' (or pyarrow)"
        ) from error
    return pyarrow


def arrow_column(arrays: Sequence[numpy.ndarray], token_axis: Optional[int]):
    """The Arrow array of `arrays` (one a row, of one shape but the length of `token_axis`):
    their values nested axis by axis, outermost last."""
    pa = _pyarrow()
    if not arrays:
        raise ValueError("no rows")
    values = pa.array(numpy.concatenate([array.reshape(-1) for array in arrays]))
    shapes = [array.shape for array in arrays]
    ndim = len(shapes[0])
    if token_axis is not None and token_axis < 0:
        token_axis += ndim
    for axis in reversed(range(ndim)):
        if axis == token_axis:
            # One list per element of the axes before: each as long as its row's tokens.
            lengths = [shape[axis] for shape in shapes for _ in range(_count(shape[:axis]))]
            offsets = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(numpy.int64)
            values = pa.LargeListArray.from_arrays(pa.array(offsets), values)
        else:
            values = pa.FixedSizeListArray.from_arrays(values, shapes[0][axis])
    return values


def _count(shape: Tuple[int, ...]) -> int:
    return int(numpy.prod(shape, dtype=numpy.int64))


def _is_a_list(pa, kind) -> bool:
    return any(
        check(kind)
        for check in (pa.types.is_fixed_size_list, pa.types.is_large_list, pa.types.is_list)
    )


def row_array(column, row: int) -> numpy.ndarray:
    """The numpy array of row `row` of an `embedding` column (an Arrow array; Spark's plain
    lists too)."""
    pa = _pyarrow()
    nested = column.slice(row, 1)
    shape: List[int] = []
    while _is_a_list(pa, nested.type):
        outer = len(nested)
        fixed = pa.types.is_fixed_size_list(nested.type)
        size = nested.type.list_size if fixed else None
        nested = nested.flatten()
        # A plain list under an empty one (Spark's, no tokens) has no length to tell: 0.
        shape.append(size if size is not None else len(nested) // max(outer, 1))
    return nested.to_numpy(zero_copy_only=False).reshape(shape)


def write_parquet(
    output_file: str,
    lines: List[Line],
    array_of: Callable[[int], numpy.ndarray],
    token_axis: Optional[int],
    forget_sentences: bool = False,
) -> None:
    """Writes `output_file` (the layout above) in line order, each line's array from
    `array_of(line number)`, in row groups of `ROWS_PER_GROUP`; renamed into place once
    complete."""
    pa = _pyarrow()
    with replaced_when_complete(output_file) as partial:
        writer = None
        try:
            for group in _groups(lines):
                arrays = [array_of(number) for number, _ in group]
                require_space(output_file, sum(array.nbytes for array in arrays))
                columns = {LINE_COLUMN: pa.array([number for number, _ in group], pa.int64())}
                if not forget_sentences:
                    columns[SENTENCE_COLUMN] = pa.array([text for _, text in group], pa.string())
                columns[EMBEDDING_COLUMN] = arrow_column(arrays, token_axis)
                table = pa.table(columns)
                if writer is None:
                    writer = pa.parquet.ParquetWriter(partial, table.schema)
                writer.write_table(table)
            if writer is None:
                pa.parquet.write_table(_empty_table(pa, forget_sentences), partial)
        finally:
            if writer is not None:
                writer.close()


def _empty_table(pa, forget_sentences: bool):
    columns = {LINE_COLUMN: pa.array([], pa.int64())}
    if not forget_sentences:
        columns[SENTENCE_COLUMN] = pa.array([], pa.string())
    return pa.table(columns)


def _groups(lines: List[Line]) -> Iterator[List[Line]]:
    for start in range(0, len(lines), ROWS_PER_GROUP):
        yield lines[start : start + ROWS_PER_GROUP]


def read_parquet(path: str) -> Iterator[Tuple[int, Optional[str], numpy.ndarray]]:
    """`(line number, sentence or None, array)` of each row of an `elmo-embed` Parquet file,
    in order, one row group in memory at a time."""
    pa = _pyarrow()
    parquet = pa.parquet.ParquetFile(path)
    for group in range(parquet.num_row_groups):
        table = parquet.read_row_group(group)
        if EMBEDDING_COLUMN not in table.column_names:  # a file of no lines
            return
        numbers = table.column(LINE_COLUMN).to_pylist()
        texts = (
            table.column(SENTENCE_COLUMN).to_pylist()
            if SENTENCE_COLUMN in table.column_names
            else [None] * len(numbers)
        )
        embeddings = table.column(EMBEDDING_COLUMN).combine_chunks()
        for row, (number, text) in enumerate(zip(numbers, texts)):
            yield number, text, row_array(embeddings, row)
