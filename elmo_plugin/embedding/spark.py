"""
ELMo in a PySpark job: `elmo_map_in_arrow` makes the function for `DataFrame.mapInArrow`, and
`embedded_schema` its output schema: each Python worker loads the biLM once (kept while Spark
reuses the worker) and embeds each Arrow batch of a partition in the token-budget batches of
`elmo-embed` (`arrow_embedding`). Spark reads Arrow lists (not fixed-size or large ones) and has
no float16, so the vectors come as nested `array<float>`. Runnable example:
docs/examples/spark_embed.py; when to use it: docs/scale.md.

    function = elmo_map_in_arrow(model="small", pool="tfhub-default")
    frame.mapInArrow(function, embedded_schema(frame.schema, pool="tfhub-default"))
"""

from typing import Any, Callable, Dict, Iterator, Tuple

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.arrow_embedding import EMBEDDING_COLUMN, ArrowEmbedder
from elmo_plugin.embedding.pooling import NO_POOL, is_pooled

# What an ELMo job sets on its SparkSession (`builder.config(key, value)`), each for its start-up
# or its parallelism: a line takes far longer to embed than to read, so a text file is split into
# one partition a core (Spark's 4 MB "cost of opening a file" would give a small corpus one
# partition, and one core), and no web UI. (Tried and dropped: docs/scale.md, "Which is faster".)
SESSION_SETTINGS = {
    "spark.sql.files.openCostInBytes": "1024",
    "spark.ui.enabled": "false",
}

# The biLM of each set of arguments this Python worker embedded with.
_WORKER_EMBEDDERS: Dict[Tuple[Tuple[str, Any], ...], ArrowEmbedder] = {}


def _embedder(arguments: Dict[str, Any]) -> ArrowEmbedder:
    key = tuple(sorted(arguments.items()))
    if key not in _WORKER_EMBEDDERS:
        _WORKER_EMBEDDERS[key] = ArrowEmbedder(**arguments)
    return _WORKER_EMBEDDERS[key]


def _nesting(output_format: str, pool: str) -> int:
    """The list depth of a row's vectors: a vector, plus the tokens unpooled, plus the layers
    of `all`."""
    return 1 + (not is_pooled(pool)) + (output_format == "all")


def elmo_map_in_arrow(**arguments: Any) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The `mapInArrow` function embedding the text column: `ArrowEmbedder`'s arguments
    (float32 only)."""
    if arguments.get("dtype", "float32") != "float32":
        raise ConfigurationError("Spark has no float16 type: leave dtype at 'float32'")
    depth = _nesting(arguments.get("output_format", "all"), arguments.get("pool", NO_POOL))
    column = arguments.get("embedding_column", EMBEDDING_COLUMN)

    def embed(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow

        embedder = _embedder(arguments)
        spark_type = pyarrow.float32()
        for _ in range(depth):
            spark_type = pyarrow.list_(spark_type)
        for batch in batches:
            table = embedder.embed_table(pyarrow.Table.from_batches([batch]))
            index = table.column_names.index(column)
            table = table.set_column(index, column, table.column(column).cast(spark_type))
            yield from table.to_batches()

    return embed


def embedded_schema(
    schema: Any,
    output_format: str = "all",
    pool: str = NO_POOL,
    embedding_column: str = EMBEDDING_COLUMN,
) -> Any:
    """`schema` (a `StructType`, the input frame's) with the embedding column that
    `elmo_map_in_arrow` with these arguments appends."""
    from pyspark.sql.types import ArrayType, FloatType, StructField, StructType

    spark_type: Any = FloatType()
    for _ in range(_nesting(output_format, pool)):
        spark_type = ArrayType(spark_type)
    return StructType([*schema.fields, StructField(embedding_column, spark_type)])
