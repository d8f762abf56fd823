"""
What `elmo-embed` makes of each sentence's layers and where it puts them, beside the layer
choice (`--output-format`): pooled over the tokens or not (`pooling`), float32 or float16,
into hdf5 (`embeddings_file`) or Parquet (`parquet_output`), as one file or one shard per
process (`shards`). The journal keeps float32 pooled or per-token arrays; the dtype is applied
as the output is written, where a value too large for float16 is an error naming its line.
"""

import logging
from dataclasses import asdict, dataclass, replace
from typing import Callable, Dict, List, Optional

import numpy

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding import shards
from elmo_plugin.embedding.embeddings_file import Line, format_layers, write_hdf5
from elmo_plugin.embedding.parquet_output import write_parquet
from elmo_plugin.embedding.pooling import NO_POOL, check_pool, is_pooled, pool_layers

logger = logging.getLogger(__name__)

OUTPUT_DTYPES = ("float32", "float16")


@dataclass(frozen=True)
class EmbeddingOutput:
    """
    # Parameters

    pool : `str`, optional (default = `"none"`)
        `"mean"` or a preset of `pooling`; `"none"` keeps a vector a token.
    dtype : `str`, optional (default = `"float32"`)
        `"float16"` halves the output (not the journal).
    file_format : `str`, optional (default = by the output's extension)
        `"hdf5"` or `"parquet"`; of the shards with `sharded`.
    sharded : `bool`, optional (default = `False`)
        Each process writes its shard; the output file is their manifest.
    """

    pool: str = NO_POOL
    dtype: str = "float32"
    file_format: Optional[str] = None
    sharded: bool = False

    def checked(
        self, output_file: str, output_format: str, use_sentence_keys: bool
    ) -> "EmbeddingOutput":
        """This output checked against the other settings, its file format settled."""
        check_pool(self.pool, output_format)
        if self.dtype not in OUTPUT_DTYPES:
            raise ConfigurationError(
                f"output dtype must be one of {OUTPUT_DTYPES}, got {self.dtype!r}"
            )
        file_format = self.file_format or shards.file_format_of(output_file)
        if file_format not in shards.FILE_FORMATS:
            raise ConfigurationError(
                f"output file format must be one of {shards.FILE_FORMATS}, got {file_format!r}"
            )
        if use_sentence_keys and (file_format == shards.PARQUET or self.sharded):
            raise ConfigurationError(
                "use_sentence_keys names hdf5 datasets in one file: Parquet rows and shards "
                "are read by line number (Parquet rows carry the sentence in a column)"
            )
        return replace(self, file_format=file_format)

    def settings(self) -> Dict[str, object]:
        """What the journal records of this output: all of it, since a job resumed with other
        settings would mix outputs."""
        return {f"output_{key}": value for key, value in asdict(self).items()}

    def format(
        self, layers: numpy.ndarray, output_format: str, source: Optional[str], number: int
    ) -> numpy.ndarray:
        """A sentence's `(L + 1, num_tokens, dim)` layers as the journal keeps them."""
        formatted = format_layers(layers, output_format, source, number)
        return pool_layers(layers, formatted, self.pool)

    def writes_on(self, rank: int) -> bool:
        """Whether process `rank` writes a file: each its shard, else rank 0 the output."""
        return self.sharded or rank == 0

    def write(
        self,
        output_file: str,
        lines: List[Line],
        array_of: Callable[[int], numpy.ndarray],
        source: Optional[str],
        forget_sentences: bool,
        use_sentence_keys: bool,
        journal_folder: str,
        rank: int,
        world_size: int,
    ) -> None:
        """Writes this process's file: its shard (unless a rerun finds it written), or the
        whole output."""
        if not self.sharded:
            self._write_file(
                output_file, lines, array_of, source, forget_sentences, use_sentence_keys
            )
            return
        assert self.file_format is not None
        path = shards.shard_path(output_file, rank, world_size, self.file_format)
        if shards.shard_is_written(journal_folder, path, rank, world_size):
            logger.info("%s was written by an earlier run of this job: kept", path)
            return
        start, end = shards.line_range(rank, world_size, len(lines))
        self._write_file(path, lines[start:end], array_of, source, forget_sentences, False)
        shards.record_shard(journal_folder, path, rank, world_size)

    def finish(self, output_file: str, journal_folder: str, lines: int, world_size: int) -> None:
        """Rank 0, once every process has written: the manifest of the shards."""
        if self.sharded:
            assert self.file_format is not None
            shards.write_manifest(output_file, journal_folder, lines, world_size, self.file_format)

    def _write_file(
        self,
        path: str,
        lines: List[Line],
        array_of: Callable[[int], numpy.ndarray],
        source: Optional[str],
        forget_sentences: bool,
        use_sentence_keys: bool,
    ) -> None:
        def cast(number: int) -> numpy.ndarray:
            return in_dtype(array_of(number), self.dtype, source, number)

        if is_pooled(self.pool):
            _warn_about_empty_means(source, lines)
        if self.file_format == shards.PARQUET:
            token_axis = None if is_pooled(self.pool) else -2
            write_parquet(path, lines, cast, token_axis, forget_sentences)
        else:
            write_hdf5(path, lines, cast, source, forget_sentences, use_sentence_keys, self.dtype)


def in_dtype(array: numpy.ndarray, dtype: str, source: Optional[str], number: int) -> numpy.ndarray:
    with numpy.errstate(over="ignore"):
        converted = array.astype(dtype)
    overflowed = int((numpy.isinf(converted) & numpy.isfinite(array)).sum())
    if overflowed:
        raise ConfigurationError(
            f"{source or 'the input'}, line {number + 1}: {overflowed} values are beyond "
            f"{dtype}'s range (largest {numpy.finfo(dtype).max}); write float32 instead"
        )
    return converted


def _warn_about_empty_means(source: Optional[str], lines: List[Line]) -> None:
    empty = [number + 1 for number, text in lines if not text]
    if empty:
        logger.warning(
            "%s: %d empty lines (line %d first) have no tokens to pool: their vectors are NaN",
            source or "the input",
            len(empty),
            empty[0],
        )
