"""
`allennlp elmo-embed`: embed a text file (one tokenised sentence per line) with a biLM and write
every sentence's ELMo layers to hdf5, in the layout of bilm-tf's `dump_bilm_embeddings`: one
dataset per sentence, named by its 0-based line number, of shape `(L + 1, num_tokens, dim)`
(or `(num_tokens, dim)` for `--output-format top|average`), plus `sentence_to_index`, a JSON
map from each sentence's text to its dataset name, as AllenNLP 0.x's `elmo` command wrote. A
thin layer over the `elmo-embed` console command (`elmo_plugin.embedding.cli`), adding
`--archive` (`elmo_plugin.allennlp.archives.bilm_from_archive`).
"""

import argparse

from allennlp.commands.subcommand import Subcommand
from overrides import overrides

from elmo_plugin.allennlp.archives import bilm_from_archive, files_read
from elmo_plugin.allennlp.commands.subparsers import add_command_parser
from elmo_plugin.embedding import cli


@Subcommand.register("elmo-embed")
class ElmoEmbed(Subcommand):
    """
    Writes the ELMo layer activations of every line of a text file to an hdf5 file: the
    `elmo-embed` console command's arguments (`elmo_plugin.embedding.cli`) and `--archive`.

    Registered as a `Subcommand` with name "elmo-embed".
    """

    @overrides
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        subparser = add_command_parser(parser, self.name, cli.DESCRIPTION)
        model = subparser.add_mutually_exclusive_group()
        cli.add_arguments(subparser, model)
        model.add_argument(
            "--archive",
            help="a model.tar.gz of a trained `bilm` model, or of any model with an ELMo biLM "
            "(its weights come from the archive: no biLM files needed)",
        )
        subparser.set_defaults(func=_embed_from_args)
        return subparser


def _embed_from_args(args: argparse.Namespace) -> None:
    files = cli.check_arguments(args, files_read(args.archive) if args.archive else [])
    bilm = bilm_from_archive(args.archive, args.cuda_device) if args.archive else None
    cli.embed(args, bilm, files)
