"""
`allennlp elmo-export ARCHIVE OUT_DIR`: writes the biLM of a trained `bilm` model as bilm-tf
`options.json` + `weights.hdf5` (and, with `--include-softmax`, `softmax.hdf5` + `vocab.txt`);
with `--format onnx`, the biLM of a `bilm` model, of bilm-tf files or of an ELMoForManyLangs
model as `elmo.onnx`
(`elmo_plugin.elmo.formats.onnx.export`).
"""

import argparse
import logging
import os
import tarfile
from typing import List, Optional, Tuple

from allennlp.commands.subcommand import Subcommand
from allennlp.models.archival import CONFIG_NAME
from overrides import overrides

from elmo_plugin.allennlp.archives import bilm_from_archive
from elmo_plugin.allennlp.commands.subparsers import add_command_parser
from elmo_plugin.elmo.execution.devices import check_cuda_device
from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.bilm_tf import OPTIONS_NAME, WEIGHTS_NAME
from elmo_plugin.elmo.formats.efml import DESCRIPTION as EFML_DESCRIPTION
from elmo_plugin.elmo.formats.efml import is_efml_directory, load_efml_bilm
from elmo_plugin.elmo.formats.loading import load_bilm

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
        subparser = add_command_parser(parser, self.name, description)
        subparser.add_argument(
            "archive_file",
            type=str,
            help="model.tar.gz (or serialization directory) of a `bilm` model; with --format "
            "onnx also a bilm-tf options.json (with --weight-file), a directory holding "
            "options.json and weights.hdf5, or an ELMoForManyLangs model directory",
        )
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
        subparser.add_argument(
            "--format",
            choices=FORMATS,
            default=FORMATS[0],
            help="bilm-tf files (default) or an ONNX model, elmo.onnx, for ONNX Runtime",
        )
        subparser.add_argument(
            "--weight-file", type=str, help="onnx: the weights.hdf5 of a bilm-tf options.json"
        )
        subparser.add_argument(
            "--scalar-mix",
            type=float,
            nargs="+",
            help="onnx: also output this fixed mix of the layers (pre-softmax weights, one each)",
        )
        subparser.add_argument(
            "--gamma", type=float, default=1.0, help="onnx: the scalar mix's gamma (default 1)"
        )
        subparser.add_argument(
            "--keep-sentence-boundaries",
            action="store_true",
            help="onnx: keep the <S> and </S> positions in the outputs",
        )
        subparser.set_defaults(func=export_from_args)
        return subparser


FORMATS = ["bilm-tf", "onnx"]
ONNX_FILE_NAME = "elmo.onnx"
_ONNX_ONLY = ["weight_file", "scalar_mix", "keep_sentence_boundaries"]


def export_from_args(args: argparse.Namespace) -> None:
    from elmo_plugin.allennlp.lm.export import export_bilm

    check_cuda_device(args.cuda_device, "--cuda-device")

    if args.format == "onnx":
        scalar_mix = None if args.scalar_mix is None else (args.scalar_mix, args.gamma)
        print(
            export_onnx_model(
                args.archive_file,
                args.output_dir,
                args.weight_file,
                scalar_mix,
                args.keep_sentence_boundaries,
            )
        )
        return
    given = [f"--{name.replace('_', '-')}" for name in _ONNX_ONLY if getattr(args, name)]
    if given:
        raise ConfigurationError(f"{', '.join(given)}: only for --format onnx")

    written = export_bilm(
        args.archive_file,
        args.output_dir,
        args.include_softmax,
        args.cuda_device,
        softmax_float16=args.softmax_float16,
    )
    for path in written:
        print(path)


def export_onnx_model(
    source: str,
    output_dir: str,
    weight_file: Optional[str] = None,
    scalar_mix: Optional[Tuple[List[float], float]] = None,
    keep_sentence_boundaries: bool = False,
) -> str:
    """
    Writes the biLM of `source` as `output_dir/elmo.onnx` (`export_onnx`) and returns its path.

    # Parameters

    source : `str`
        A bilm-tf `options.json` (with `weight_file`), a directory holding bilm-tf
        `options.json` and `weights.hdf5`, a trained `bilm` model's archive or serialization
        directory, or an ELMoForManyLangs model directory.
    output_dir : `str`
    weight_file : `str`, optional
    scalar_mix : `Tuple[List[float], float]`, optional
        Pre-softmax layer weights and gamma of a fixed scalar mix to output too.
    keep_sentence_boundaries : `bool`, optional (default = `False`)
    """
    from elmo_plugin.elmo.formats.onnx.export import ScalarMixWeights, export_onnx

    bilm = bilm_to_export(source, weight_file)
    os.makedirs(output_dir, exist_ok=True)
    mix = None if scalar_mix is None else ScalarMixWeights(*scalar_mix)
    path = os.path.join(output_dir, ONNX_FILE_NAME)
    return export_onnx(bilm, path, mix, keep_sentence_boundaries)


def bilm_to_export(source: str, weight_file: Optional[str]) -> ElmoBiLm:
    """The biLM `export_onnx_model` exports (see its `source`), or an error naming what is
    supported."""
    if weight_file is not None or source.endswith(".json"):
        if weight_file is None:
            raise ConfigurationError(
                f"{source}: a bilm-tf options.json needs its weights: --weight-file weights.hdf5"
            )
        return load_bilm(source, weight_file)
    if is_efml_directory(source):
        return load_efml_bilm(source)
    options, weights = (os.path.join(source, name) for name in (OPTIONS_NAME, WEIGHTS_NAME))
    if os.path.isfile(options) and os.path.isfile(weights):
        return load_bilm(options, weights)
    if (os.path.isfile(source) and tarfile.is_tarfile(source)) or os.path.isfile(
        os.path.join(source, CONFIG_NAME)
    ):
        return bilm_from_archive(source)
    raise ConfigurationError(
        f"{source}: cannot export this to ONNX. Supported are a bilm-tf options.json with "
        f"--weight-file, a directory holding bilm-tf {OPTIONS_NAME} and {WEIGHTS_NAME}, and a "
        f"trained `bilm` model's model.tar.gz or serialization directory, and {EFML_DESCRIPTION}"
    )
