"""
`allennlp elmo-export ARCHIVE OUT_DIR`: writes the biLM of a trained `bilm` model as bilm-tf
`options.json` + `weights.hdf5` (and, with `--include-softmax`, `softmax.hdf5` + `vocab.txt`).
"""

import argparse
import logging

from allennlp.commands.subcommand import Subcommand
from overrides import overrides

logger = logging.getLogger(__name__)


@Subcommand.register("elmo-export")
class ElmoExport(Subcommand):
    """
    Exports the biLM of a `bilm` model archive to the bilm-tf format, which this plugin's
    `elmo` embedder, AllenNLP's `Elmo` and `elmo_token_embedder`, and bilm-tf load.

    Registered as a `Subcommand` with name "elmo-export".
    """

    @overrides
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Export the biLM of a trained `bilm` model (allennlp train) as bilm-tf "
            "options.json + weights.hdf5, for ELMo embedders."
        )
        found = (
            " (Found by `allennlp` from any directory once elmo_plugin is pip-installed; from a "
            "clone, in its root or with --include-package elmo_plugin.)"
        )
        subparser = parser.add_parser(self.name, description=description + found, help=description)
        subparser.add_argument("archive_file", type=str, help="model.tar.gz of a `bilm` model")
        subparser.add_argument("output_dir", type=str, help="directory to write the files to")
        subparser.add_argument(
            "--include-softmax",
            action="store_true",
            help="also write softmax.hdf5 and vocab.txt, so the export can be trained further",
        )
        subparser.add_argument(
            "--softmax-float16",
            action="store_true",
            help="store the softmax weights in 16 bits (half the size; read back as float32)",
        )
        subparser.add_argument(
            "--cuda-device", type=int, default=-1, help="device to load the archive on"
        )
        subparser.set_defaults(func=export_from_args)
        return subparser


def export_from_args(args: argparse.Namespace) -> None:
    from elmo_plugin.lm.export import export_bilm

    written = export_bilm(
        args.archive_file,
        args.output_dir,
        args.include_softmax,
        args.cuda_device,
        softmax_float16=args.softmax_float16,
    )
    for path in written:
        print(path)
