"""
`allennlp elmo-export SOURCE OUT_DIR`: writes the biLM of a trained `bilm` model, or one named
as every entry point names a biLM (a short name, `elmo_plugin://...`, a folder, a ZIP), as
bilm-tf `options.json` + `weights.hdf5` (and, from a `bilm` model with `--include-softmax`,
`softmax.hdf5` + `vocab.txt`); with `--format onnx`, as `elmo.onnx`, ELMoForManyLangs models
too (`elmo_plugin.elmo.formats.onnx.export`). The output is checked before the biLM is read.
"""

import argparse
import logging
import os
import tarfile
import zipfile
from typing import Dict, List, Mapping, Optional, Tuple

from allennlp.commands.subcommand import Subcommand
from allennlp.models.archival import CONFIG_NAME
from overrides import overrides

from elmo_plugin.allennlp.archives import bilm_from_archive
from elmo_plugin.allennlp.archives import files_read as archive_files
from elmo_plugin.allennlp.commands.subparsers import add_command_parser
from elmo_plugin.elmo.execution.devices import check_cuda_device
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import (
    check_output_directory,
    check_output_file,
)
from elmo_plugin.elmo.formats.naming.bilm_formats import EFML, OPTIONS_NAME, WEIGHTS_NAME
from elmo_plugin.elmo.formats.efml import DESCRIPTION as EFML_DESCRIPTION
from elmo_plugin.elmo.formats.efml import is_efml_directory
from elmo_plugin.elmo.formats.exports import save_bilm
from elmo_plugin.elmo.files.file_sets import MANIFEST_NAME
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.elmo.formats.tensorflow.bilm_checkpoint import is_checkpoint
from elmo_plugin.elmo.formats.naming.package_files import refuse_overwriting
from elmo_plugin.elmo.formats.naming.names import (
    BilmFiles,
    files_read,
    require_weights,
    resolve_bilm,
)

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
            "Export the biLM of a trained `bilm` model (allennlp train), or any biLM by name, "
            "as bilm-tf options.json + weights.hdf5 for ELMo embedders, or as ONNX."
        )
        subparser = add_command_parser(parser, self.name, description)
        subparser.add_argument(
            "archive_file",
            type=str,
            help="model.tar.gz (or serialization directory) of a `bilm` model, or a biLM as "
            "elmo-embed --model names one: a published biLM's short name, elmo_plugin://..., "
            "a folder or a ZIP of bilm-tf files or of an ELMoForManyLangs model (onnx only), "
            "or a bilm-tf options.json with --weight-file",
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
            "--weight-file", type=str, help="the weights.hdf5 of a bilm-tf options.json"
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
_ONNX_ONLY = ["scalar_mix", "keep_sentence_boundaries"]
_ARCHIVE_ONLY = ["include_softmax", "softmax_float16"]
SOURCE = "source"


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
    _refuse_flags(args, _ONNX_ONLY, "only for --format onnx")
    if is_archive(args.archive_file) or is_checkpoint(args.archive_file):  # with a softmax
        _refuse_flags(args, ["weight_file"], "only for bilm-tf files, not an archive")
        written = export_bilm(
            args.archive_file,
            args.output_dir,
            args.include_softmax,
            args.cuda_device,
            softmax_float16=args.softmax_float16,
        )
    else:
        _refuse_flags(
            args,
            _ARCHIVE_ONLY,
            "only for a trained `bilm` model's archive or a bilm-tf training checkpoint",
        )
        written = export_bilm_files(args.archive_file, args.output_dir, args.weight_file)
    for path in written:
        print(path)


def _refuse_flags(args: argparse.Namespace, names: List[str], why: str) -> None:
    given = [f"--{name.replace('_', '-')}" for name in names if getattr(args, name)]
    if given:
        raise ConfigurationError(f"{', '.join(given)}: {why}")


def is_archive(source: str) -> bool:
    """Whether `source` names a trained model's archive (a `.tar.gz`, there or not) or
    serialization directory, rather than a biLM's files (an ELMoForManyLangs folder has a
    config.json too)."""
    if "://" in source:
        return False
    return (
        source.endswith((".tar.gz", ".tgz"))
        or (os.path.isfile(source) and tarfile.is_tarfile(source))
        or (os.path.isfile(os.path.join(source, CONFIG_NAME)) and not is_efml_directory(source))
    )


def export_bilm_files(source: str, output_dir: str, weight_file: Optional[str]) -> List[str]:
    """Writes the biLM that `source` (and `weight_file`) name, as every entry point names one,
    as bilm-tf `options.json` + `weights.hdf5` into `output_dir`; returns their paths."""
    files = export_source(source, weight_file)
    if files.format == EFML:
        raise ConfigurationError(
            f"{source} is an ELMoForManyLangs model, whose token layer bilm-tf files cannot "
            "hold; export it with --format onnx"
        )
    names = [OPTIONS_NAME, WEIGHTS_NAME]
    check_export_output(output_dir, names + [MANIFEST_NAME], files_read(files, SOURCE))
    save_bilm(load_bilm(files, None), output_dir)
    return [os.path.join(output_dir, name) for name in names]


def export_onnx_model(
    source: str,
    output_dir: str,
    weight_file: Optional[str] = None,
    scalar_mix: Optional[Tuple[List[float], float]] = None,
    keep_sentence_boundaries: bool = False,
) -> str:
    """
    Writes the biLM of `source` as `output_dir/elmo.onnx` (`export_onnx`) and returns its path;
    the output, the mix and the `onnx` package are checked before the biLM is read.

    # Parameters

    source : `str`
        A trained `bilm` model's archive or serialization directory, or a biLM named as every
        entry point names one (`elmo_plugin.elmo.formats.naming.names`: a short name,
        `elmo_plugin://...`, a folder or a ZIP of bilm-tf files or of an ELMoForManyLangs
        model, or a bilm-tf `options.json` with `weight_file`).
    output_dir : `str`
    weight_file : `str`, optional
    scalar_mix : `Tuple[List[float], float]`, optional
        Pre-softmax layer weights and gamma of a fixed scalar mix to output too.
    keep_sentence_boundaries : `bool`, optional (default = `False`)
    """
    from elmo_plugin.elmo.formats.onnx.export import (
        ScalarMixWeights,
        check_scalar_mix,
        export_onnx,
        import_onnx,
    )

    import_onnx()
    mix = None if scalar_mix is None else ScalarMixWeights(*scalar_mix)
    check_scalar_mix(mix)
    if is_archive(source):
        if weight_file is not None:
            raise ConfigurationError("--weight-file: only for bilm-tf files, not an archive")
        if not os.path.exists(source):
            raise ConfigurationError(f"model archive {source} does not exist")
        inputs: Dict[str, Optional[str]] = {f"archive file {p}": p for p in archive_files(source)}
        check_export_output(output_dir, [ONNX_FILE_NAME], inputs)
        bilm = bilm_from_archive(source)
    else:
        files = export_source(source, weight_file)
        check_export_output(output_dir, [ONNX_FILE_NAME], files_read(files, SOURCE))
        bilm = load_bilm(files, None)
    os.makedirs(output_dir, exist_ok=True)
    return export_onnx(
        bilm, os.path.join(output_dir, ONNX_FILE_NAME), mix, keep_sentence_boundaries
    )


def export_source(source: str, weight_file: Optional[str]) -> BilmFiles:
    """The files of the biLM that `source` (and `weight_file`) name, or an error naming what
    can be exported; nothing is loaded."""
    if weight_file is None and source.endswith(".json"):
        raise ConfigurationError(
            f"{source}: a bilm-tf options.json needs its weights: --weight-file weights.hdf5"
        )
    if weight_file is None and os.path.isfile(source) and not zipfile.is_zipfile(source):
        raise ConfigurationError(
            f"{source}: cannot export this file. Supported are a bilm-tf options.json with "
            f"--weight-file, a trained `bilm` model's model.tar.gz or serialization directory, "
            f"and a biLM named as elmo-embed --model names one: a published biLM's short name, "
            f"elmo_plugin://..., a folder or a ZIP holding bilm-tf {OPTIONS_NAME} and "
            f"{WEIGHTS_NAME}, or {EFML_DESCRIPTION}"
        )
    return require_weights(resolve_bilm(source, weight_file, SOURCE), SOURCE)


def check_export_output(
    output_dir: str, names: List[str], inputs: Mapping[str, Optional[str]]
) -> None:
    """Before the biLM is read: `output_dir` can hold the files `names` (a writable folder, or
    one that can be made), none of which is a folder, device or pipe or one of `inputs`
    (compared through symbolic links)."""
    check_output_directory(output_dir)
    for name in names:
        path = os.path.join(output_dir, name)
        if os.path.isdir(output_dir):
            check_output_file(path, "output file")
        refuse_overwriting(path, inputs)
