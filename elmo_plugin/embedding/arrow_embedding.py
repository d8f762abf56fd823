"""
Embedding the text column of Arrow tables, what Ray Data's `map_batches` and Spark's
`mapInArrow` hand a worker: the biLM is loaded once (per actor, per Python worker), and each
table, whatever its size, is re-planned into the token-budget batches of `elmo-embed`
(`bulk.plan_batches`, each batch embedded as a bulk job embeds it), so that a worker's memory
is bounded by `max_tokens` and its batches hold sentences of nearly one length. The rows come
back in their order with an embedding column beside the input's columns, per-token arrays or
pooled vectors (`pooling`), float32 or float16, nested as `parquet_output` writes them.
"""

from typing import Any, List, Optional

import numpy
import torch

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.names import SHIPPED_BILM
from elmo_plugin.embedding.bulk import embed_planned_batch, plan_batches
from elmo_plugin.embedding.elmo_embedder import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS
from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder
from elmo_plugin.embedding.embeddings_file import check_output_format
from elmo_plugin.embedding.outputs import EmbeddingOutput, in_dtype
from elmo_plugin.embedding.parquet_output import arrow_column
from elmo_plugin.embedding.pooling import NO_POOL, is_pooled

TEXT_COLUMN = "text"
EMBEDDING_COLUMN = "embedding"


class ArrowEmbedder:
    """
    Appends to an Arrow table (or record batch) the ELMo vectors of its text column, one
    whitespace-tokenised sentence a row.

    # Parameters

    model : `str`, optional (default = the shipped biLM)
        What `ElmoEmbedder` takes: a published biLM's short name, an options file (with
        `weight_file`), a folder or a ZIP.
    weight_file : `str`, optional
    output_format : `str`, optional (default = `"all"`)
        `"all"`, `"top"` or `"average"` layers.
    pool : `str`, optional (default = `"none"`)
        `"mean"` or a preset of `elmo_plugin.embedding.pooling`.
    dtype : `str`, optional (default = `"float32"`)
        Or `"float16"`.
    batch_size : `int`, optional (default = `64`)
    max_tokens : `int`, optional (default = `4096`)
        Token positions of one biLM run: bounds a worker's memory beyond the table's vectors.
    cuda_device : `int`, optional (default = `-1`)
    threads : `int`, optional
        torch threads of this worker (e.g. the CPUs an actor was given).
    text_column : `str`, optional (default = `"text"`)
    embedding_column : `str`, optional (default = `"embedding"`)
    """

    def __init__(
        self,
        model: str = SHIPPED_BILM,
        weight_file: Optional[str] = None,
        output_format: str = "all",
        pool: str = NO_POOL,
        dtype: str = "float32",
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        cuda_device: int = -1,
        threads: Optional[int] = None,
        text_column: str = TEXT_COLUMN,
        embedding_column: str = EMBEDDING_COLUMN,
    ) -> None:
        check_output_format(output_format)
        self.output = EmbeddingOutput(pool=pool, dtype=dtype).checked("", output_format, False)
        if threads is not None:
            torch.set_num_threads(threads)
        self.embedder = ElmoEmbedder(model, weight_file, cuda_device, max_tokens)
        self.output_format = output_format
        self.batch_size = batch_size
        self.text_column = text_column
        self.embedding_column = embedding_column

    def vectors(self, texts: List[str]) -> List[numpy.ndarray]:
        """The arrays of `texts` in their order, embedded in planned batches."""
        sentences = [text.split() for text in texts]
        arrays: List[Any] = [None] * len(sentences)
        lengths = [len(sentence) for sentence in sentences]
        for batch in plan_batches(lengths, self.batch_size, self.embedder.max_tokens):
            layers = embed_planned_batch(self.embedder, [sentences[row] for row in batch])
            for row, one in zip(batch, layers):
                formatted = self.output.format(one, self.output_format, self.text_column, row)
                arrays[row] = in_dtype(formatted, self.output.dtype, self.text_column, row)
        return arrays

    def embed_table(self, table: Any) -> Any:
        """`table` (a `pyarrow.Table` or `RecordBatch`) with the embedding column appended."""
        if self.text_column not in table.column_names:
            raise ConfigurationError(
                f"the table has no column {self.text_column!r} (its columns: "
                f"{', '.join(table.column_names)}); name the text column with text_column"
            )
        texts = table.column(self.text_column).to_pylist()
        bad = next((row for row, text in enumerate(texts) if not isinstance(text, str)), None)
        if bad is not None:
            raise ConfigurationError(
                f"{self.text_column!r}, row {bad}: {texts[bad]!r} is not a string"
            )
        column = self.column(self.vectors(texts))
        return table.append_column(self.embedding_column, column)

    def column(self, arrays: List[numpy.ndarray]) -> Any:
        """The Arrow column of `arrays` (an empty one of the right type for none)."""
        token_axis = None if is_pooled(self.output.pool) else -2
        if arrays:
            return arrow_column(arrays, token_axis)
        width = self.embedder.get_output_dim()
        empty = numpy.zeros((self.embedder.num_layers, 0, width), numpy.float32)
        formatted = self.output.format(empty, self.output_format, None, 0)
        return arrow_column([formatted.astype(self.output.dtype)], token_axis).slice(0, 0)
