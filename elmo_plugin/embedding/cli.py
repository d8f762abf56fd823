"""
`elmo-embed`, the console command of a plain `pip install elmo_plugin` (no AllenNLP needed):
embed a text file (one tokenised sentence per line) into hdf5. `allennlp elmo-embed` takes the
same arguments (`add_arguments`) and `--archive` besides.
"""

import argparse
from typing import List, Optional

from elmo_plugin.elmo import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.compute_dtype import COMPUTE_DTYPES, parse_compute_dtype
from elmo_plugin.elmo.formats.atomic_files import refuse_overwriting
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.elmo.formats.package_files import SHIPPED_BILM
from elmo_plugin.embedding.elmo_embedder import embed_file
from elmo_plugin.embedding.embeddings_file import OUTPUT_FORMATS

DESCRIPTION = "Embed a file of tokenised sentences (one a line) with a biLM into hdf5."


def add_arguments(parser: argparse.ArgumentParser, model: argparse._ActionsContainer) -> None:
    """The command's arguments, the biLM's options file in `model` (a group of the parser, to
    which `allennlp elmo-embed` adds `--archive`)."""
    parser.add_argument("input_file", help="UTF-8 text, one whitespace-tokenised sentence a line")
    parser.add_argument("output_file", help="the hdf5 file to write")
    model.add_argument(
        "--options-file",
        help="bilm-tf options.json (with --weight-file): a path, a URL, or "
        f"{SHIPPED_BILM}/options.json for the shipped biLM",
    )
    parser.add_argument("--weight-file", help="bilm-tf weights.hdf5")
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default="all",
        help="all layers, the top layer, or their average",
    )
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--cuda-device", type=int, default=-1)
    parser.add_argument(
        "--compute-dtype",
        choices=sorted(COMPUTE_DTYPES),
        default="float32",
        help="float32 is exact; bfloat16 runs the biLM's products in bfloat16 (faster on "
        "CPUs with AVX512_BF16 and on recent GPUs) and writes float32 layers within ~1e-2 "
        "relative of float32's",
    )


def check_arguments(args: argparse.Namespace, archive_files: List[str]) -> None:
    """Before any biLM is loaded: the flags that go together, and no input as the output
    (`archive_files`: the files an `--archive` reads, named by it)."""
    if args.options_file and not args.weight_file:
        raise ConfigurationError("--options-file needs --weight-file")
    if args.batch_size < 1:
        raise ConfigurationError(f"--batch-size must be a positive integer, got {args.batch_size}")
    inputs = {"--options-file": args.options_file, "--weight-file": args.weight_file}
    for path in archive_files:
        inputs[f"--archive file {path}" if path != args.archive else "--archive"] = path
    refuse_overwriting(args.output_file, inputs)


def embed(args: argparse.Namespace, bilm: Optional[ElmoBiLm] = None) -> None:
    """Embeds as `args` say, with `bilm` when given (an archive's), else the options file's."""
    if bilm is None:
        bilm = load_bilm(args.options_file, args.weight_file)
    bilm.set_compute_dtype(parse_compute_dtype(args.compute_dtype))
    embed_file(
        bilm,
        args.input_file,
        args.output_file,
        args.output_format,
        args.batch_size,
        args.cuda_device,
    )


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="elmo-embed", description=DESCRIPTION)
    add_arguments(parser, parser)
    args = parser.parse_args(argv)
    args.archive = None
    if not args.options_file:
        parser.error("--options-file is required")
    try:
        check_arguments(args, [])
        embed(args)
    except ConfigurationError as error:
        parser.exit(2, f"elmo-embed: error: {error}\n")


if __name__ == "__main__":
    main()
