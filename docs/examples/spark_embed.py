"""Embeds a text file (one tokenised sentence a line) with PySpark into a folder of Parquet
files: read.text -> mapInArrow(elmo_map_in_arrow) -> write.parquet; the column `order` grows
with the line number (sort by it for the file's order).

    python docs/examples/spark_embed.py corpus.txt corpus_parquet/ --model small \
        --pool tfhub-default --master "local[2]"
"""

import argparse
import os
import sys
from typing import List, Optional

from pyspark.sql import SparkSession, functions

from elmo_plugin.embedding.embeddings_file import OUTPUT_FORMATS
from elmo_plugin.embedding.pooling import NO_POOL, POOL_CHOICES
from elmo_plugin.embedding.spark import SESSION_SETTINGS, elmo_map_in_arrow, embedded_schema


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input_file")
    parser.add_argument("output_folder")
    parser.add_argument("--model", default="small", help="a biLM name, folder, ZIP or options")
    parser.add_argument("--weight-file")
    parser.add_argument("--output-format", default="all", choices=OUTPUT_FORMATS)
    parser.add_argument("--pool", default=NO_POOL, choices=POOL_CHOICES)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)
    # Spark's Python workers run `python3` from the PATH unless told: this one has the biLM.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(args.master).appName("elmo-embed")
    for key, value in SESSION_SETTINGS.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    lines = spark.read.text(args.input_file).withColumnRenamed("value", "text")
    numbered = lines.withColumn("order", functions.monotonically_increasing_id())
    function = elmo_map_in_arrow(
        model=args.model,
        weight_file=args.weight_file,
        output_format=args.output_format,
        pool=args.pool,
        threads=1,
    )
    schema = embedded_schema(numbered.schema, args.output_format, args.pool)
    numbered.mapInArrow(function, schema).write.mode("overwrite").parquet(args.output_folder)


if __name__ == "__main__":
    main()
