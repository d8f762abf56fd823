"""
`allennlp elmo-perplexity EXPORT_DIR TEXT_FILE`: the held-out perplexity of an exported biLM
(options, weights, softmax and vocabulary) on a file of tokenised sentences, without training.
"""

import argparse
import json
import os

from allennlp.commands.subcommand import Subcommand
from overrides import overrides

from elmo_plugin.elmo.execution.devices import check_cuda_device
from elmo_plugin.elmo.files.atomic_files import (
    check_output_file,
    replaced_when_complete,
)
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import local_path, refuse_overwriting
from elmo_plugin.elmo.formats.tensorflow.bilm_checkpoint import is_checkpoint
from elmo_plugin.elmo.formats.tensorflow.language_model import (
    CheckpointLanguageModel,
    read_sentences,
)
from elmo_plugin.embedding.text_files import check_text_file


@Subcommand.register("elmo-perplexity")
class ElmoPerplexity(Subcommand):
    """
    Prints the forward, backward and overall perplexity of a biLM exported with
    `allennlp elmo-export --include-softmax` (or the shipped one) on a text file, one
    tokenised sentence a line; a `bilm` model archive is evaluated by `allennlp evaluate`.

    Registered as a `Subcommand` with name "elmo-perplexity".
    """

    @overrides
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Held-out perplexity (forward, backward, both) of a biLM exported with its softmax "
            "(allennlp elmo-export --include-softmax) on a file of tokenised sentences."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument(
            "export_dir",
            type=str,
            help="directory with options.json, weights.hdf5, softmax.hdf5 and vocab.txt "
            "(e.g. elmo_plugin://pretrained/elmo_wikipedia_512x128)",
        )
        subparser.add_argument("text_file", type=str, help="one tokenised sentence a line")
        subparser.add_argument(
            "--vocab-file",
            type=str,
            help="a bilm-tf training checkpoint's vocabulary (default: vocab.txt in its folder)",
        )
        subparser.add_argument("--output-file", type=str, help="also write the metrics as JSON")
        subparser.add_argument("--batch-size", type=int, default=64, help="sentences a batch")
        subparser.add_argument("--cuda-device", type=int, default=-1, help="device to evaluate on")
        subparser.set_defaults(func=perplexity_from_args)
        return subparser


def perplexity_from_args(args: argparse.Namespace) -> None:
    check_cuda_device(args.cuda_device, "--cuda-device")
    from elmo_plugin.allennlp.lm.perplexity import export_perplexity

    check_text_file(args.text_file)
    if args.output_file:
        check_output_file(args.output_file, "--output-file")
        refuse_overwriting(args.output_file, {"text file": args.text_file})
        export = local_path(args.export_dir) or ""
        for name in os.listdir(export) if os.path.isdir(export) else []:
            refuse_overwriting(args.output_file, {"export file": os.path.join(export, name)})
    if is_checkpoint(args.export_dir):
        metrics = CheckpointLanguageModel(
            args.export_dir, args.vocab_file, cuda_device=args.cuda_device
        ).perplexity(read_sentences(args.text_file), args.batch_size)
    elif args.vocab_file:
        raise ConfigurationError("--vocab-file: only for a bilm-tf training checkpoint")
    else:
        metrics = export_perplexity(
            args.export_dir, args.text_file, args.batch_size, args.cuda_device
        )
    text = json.dumps(metrics, indent=2)
    if args.output_file:
        with replaced_when_complete(args.output_file) as partial:
            with open(partial, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
    print(text)
