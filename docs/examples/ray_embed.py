"""Embeds a text file (one tokenised sentence a line) with Ray Data into a folder of Parquet
files, rows in line order: read_text -> map_batches(ElmoBatches) -> write_parquet.

    python docs/examples/ray_embed.py corpus.txt corpus_parquet/ --model small \
        --pool tfhub-default --actors 2

On a Ray cluster that is already running, join it instead of starting one: `--address auto`
on one of its nodes (or the address `ray start --head` printed).
"""

import argparse
from typing import List, Optional

import ray

from elmo_plugin.embedding.embeddings_file import OUTPUT_FORMATS
from elmo_plugin.embedding.outputs import OUTPUT_DTYPES
from elmo_plugin.embedding.pooling import NO_POOL, POOL_CHOICES
from elmo_plugin.embedding.ray_data import ElmoBatches


def _join_or_start_ray(address: Optional[str], actors: int) -> None:
    """Joins the Ray at `address`, or starts one of `actors` CPUs, unless this process has one."""
    if ray.is_initialized():
        return
    if address:
        ray.init(address=address)
        return
    # No dashboard: a web server and its agent started with the job and taking a CPU from it.
    ray.init(num_cpus=actors, include_dashboard=False)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input_file")
    parser.add_argument("output_folder")
    parser.add_argument("--model", default="small", help="a biLM name, folder, ZIP or options")
    parser.add_argument("--weight-file")
    parser.add_argument("--output-format", default="all", choices=OUTPUT_FORMATS)
    parser.add_argument("--pool", default=NO_POOL, choices=POOL_CHOICES)
    parser.add_argument("--dtype", default="float32", choices=OUTPUT_DTYPES)
    parser.add_argument("--actors", type=int, default=2, help="one CPU and one thread each")
    parser.add_argument(
        "--address", help="a running Ray to join ('auto', host:port); default: start one"
    )
    args = parser.parse_args(argv)
    _join_or_start_ray(args.address, args.actors)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    # Reading and writing are I/O: they take no CPU from the actors, which hold them all.
    lines = ray.data.read_text(args.input_file, drop_empty_lines=False, num_cpus=0)
    embedded = lines.map_batches(
        ElmoBatches,
        fn_constructor_kwargs=dict(
            model=args.model,
            weight_file=args.weight_file,
            output_format=args.output_format,
            pool=args.pool,
            dtype=args.dtype,
            threads=1,
        ),
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=args.actors),
        num_cpus=1,
    )
    embedded.write_parquet(args.output_folder, ray_remote_args={"num_cpus": 0})


if __name__ == "__main__":
    main()
