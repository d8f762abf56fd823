"""
`allennlp elmo-embed`: embed a text file (one tokenised sentence per line) with a biLM and write
every sentence's ELMo layers to hdf5, in the layout of bilm-tf's `dump_bilm_embeddings`: one
dataset per sentence, named by its 0-based line number, of shape `(L + 1, num_tokens, dim)`
(or `(num_tokens, dim)` for `--output-format top|average`), plus `sentence_to_index`, a JSON
map from each sentence's text to its dataset name, as AllenNLP 0.x's `elmo` command wrote. A
thin layer over `elmo_plugin.elmo_embedder` (`bilm_from_archive`, `embed_file`), whose file
`elmo_plugin.embeddings_file` writes.
"""

import argparse

from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError
from overrides import overrides

from elmo_plugin.archives import files_read
from elmo_plugin.elmo.atomic_files import refuse_overwriting
from elmo_plugin.elmo import load_bilm
from elmo_plugin.elmo.compute_dtype import COMPUTE_DTYPES, parse_compute_dtype
from elmo_plugin.elmo.package_files import SHIPPED_BILM
from elmo_plugin.elmo_embedder import bilm_from_archive, embed_file
from elmo_plugin.embeddings_file import OUTPUT_FORMATS


@Subcommand.register("elmo-embed")
class ElmoEmbed(Subcommand):
    """
    Writes the ELMo layer activations of every line of a text file to an hdf5 file.

    Registered as a `Subcommand` with name "elmo-embed".
    """

    @overrides
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Embed a file of tokenised sentences (one a line) with a biLM into hdf5. (Found by "
            "`allennlp` from any directory once elmo_plugin is pip-installed; from a clone, in "
            "its root or with --include-package elmo_plugin.)"
        )
        subparser = parser.add_parser(
            self.name, description=description, help=description.split(" (Found")[0]
        )
        subparser.add_argument(
            "input_file", help="UTF-8 text, one whitespace-tokenised sentence a line"
        )
        subparser.add_argument("output_file", help="the hdf5 file to write")
        model = subparser.add_mutually_exclusive_group(required=True)
        model.add_argument(
            "--options-file",
            help="bilm-tf options.json (with --weight-file): a path, a URL, or "
            f"{SHIPPED_BILM}/options.json for the shipped biLM",
        )
        model.add_argument(
            "--archive",
            help="a model.tar.gz of a trained `bilm` model, or of any model with an ELMo biLM "
            "(its weights come from the archive: no biLM files needed)",
        )
        subparser.add_argument("--weight-file", help="bilm-tf weights.hdf5")
        subparser.add_argument(
            "--output-format",
            choices=OUTPUT_FORMATS,
            default="all",
            help="all layers, the top layer, or their average",
        )
        subparser.add_argument("--batch-size", type=int, default=64)
        subparser.add_argument("--cuda-device", type=int, default=-1)
        subparser.add_argument(
            "--compute-dtype",
            choices=sorted(COMPUTE_DTYPES),
            default="float32",
            help="float32 is exact; bfloat16 runs the biLM's products in bfloat16 (faster on "
            "CPUs with AVX512_BF16 and on recent GPUs) and writes float32 layers within ~1e-2 "
            "relative of float32's",
        )
        subparser.set_defaults(func=_embed_from_args)
        return subparser


def _embed_from_args(args: argparse.Namespace) -> None:
    _check_arguments(args)
    bilm = (
        bilm_from_archive(args.archive, args.cuda_device)
        if args.archive
        else load_bilm(args.options_file, args.weight_file)
    )
    bilm.set_compute_dtype(parse_compute_dtype(args.compute_dtype))
    embed_file(
        bilm,
        args.input_file,
        args.output_file,
        args.output_format,
        args.batch_size,
        args.cuda_device,
    )


def _check_arguments(args: argparse.Namespace) -> None:
    """Before any biLM is loaded: the flags that go together, and no input as the output."""
    if args.options_file and not args.weight_file:
        raise ConfigurationError("--options-file needs --weight-file")
    if args.batch_size < 1:
        raise ConfigurationError(f"--batch-size must be a positive integer, got {args.batch_size}")
    inputs = {"--options-file": args.options_file, "--weight-file": args.weight_file}
    for path in files_read(args.archive) if args.archive else []:
        inputs[f"--archive file {path}" if path != args.archive else "--archive"] = path
    refuse_overwriting(args.output_file, inputs)
