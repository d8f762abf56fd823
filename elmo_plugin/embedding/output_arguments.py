"""`elmo-embed`'s options of what it writes (`outputs.EmbeddingOutput`) beside the layers."""

import argparse

from elmo_plugin.embedding.outputs import OUTPUT_DTYPES, EmbeddingOutput
from elmo_plugin.embedding.pooling import NO_POOL, POOL_CHOICES
from elmo_plugin.embedding.shards import FILE_FORMATS


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pool",
        choices=POOL_CHOICES,
        default=NO_POOL,
        help="one vector a line: 'mean' over the tokens of the --output-format layers, or a "
        "published definition (tfhub-default: TF-Hub's 'default' output; simple-elmo-average: "
        "simple_elmo's get_elmo_vector_average; seqvec-protein: SeqVec's per-protein vector)",
    )
    parser.add_argument(
        "--output-dtype",
        choices=OUTPUT_DTYPES,
        default="float32",
        help="float16 halves the output; a value beyond its range is an error",
    )
    parser.add_argument(
        "--output-file-format",
        choices=FILE_FORMATS,
        help="hdf5, or parquet (one row a line: line, sentence, embedding); default: parquet "
        "for an output ending in .parquet or .pq, else hdf5",
    )
    parser.add_argument(
        "--shards",
        action="store_true",
        help="under torchrun, each process writes the lines of its share to its own file "
        "beside the output, which becomes a JSON manifest of them (read it with "
        "elmo_plugin.embedding.shards.open_embeddings)",
    )


def output_of(args: argparse.Namespace) -> EmbeddingOutput:
    return EmbeddingOutput(
        pool=args.pool,
        dtype=args.output_dtype,
        file_format=args.output_file_format,
        sharded=args.shards,
    )
