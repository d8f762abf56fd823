"""
`elmo-embed`, the console command of a plain `pip install elmo_plugin` (no AllenNLP needed):
embed a text file (one tokenised sentence per line) into hdf5. `allennlp elmo-embed` takes the
same arguments (`add_arguments`) and `--archive` besides.
"""

import argparse
import datetime
import logging
import os
from typing import Dict, List, Optional, Tuple

import torch

from elmo_plugin.elmo import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import refuse_overwriting
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.elmo.execution.devices import check_cuda_device
from elmo_plugin.elmo.formats.naming.names import (
    BilmFiles,
    files_read,
    require_weights,
    resolve_bilm,
)
from elmo_plugin.elmo.formats.naming.package_files import SHIPPED_BILM
from elmo_plugin.elmo.formats.naming.published_models import PUBLISHED_ARCHIVES, PUBLISHED_MODELS
from elmo_plugin.embedding.bulk import check_output
from elmo_plugin.embedding.elmo_embedder import DEFAULT_MAX_TOKENS, embed_file
from elmo_plugin.embedding.embeddings_file import OUTPUT_FORMATS
from elmo_plugin.embedding.execution_arguments import add_execution_arguments, execution_of
from elmo_plugin.embedding.output_arguments import add_output_arguments, output_of
from elmo_plugin.embedding.text_files import check_text_file
from elmo_plugin.embedding.threads import usable_cpus

logger = logging.getLogger(__name__)

# The variable OpenMP, and torch at its start, take the thread count from.
THREADS_VARIABLE = "OMP_NUM_THREADS"
DESCRIPTION = "Embed a file of tokenised sentences (one a line) with a biLM into hdf5 or Parquet."
EPILOG = "--archive MODEL_TAR_GZ: the biLM of a trained model instead (needs AllenNLP)."


def add_arguments(parser: argparse.ArgumentParser, model: argparse._ActionsContainer) -> None:
    """The command's arguments, the biLM's options file in `model` (a group of the parser, to
    which `allennlp elmo-embed` adds `--archive`)."""
    parser.add_argument("input_file", help="UTF-8 text, one whitespace-tokenised sentence a line")
    parser.add_argument(
        "output_file", help="the hdf5 or Parquet file to write; with --shards, their manifest"
    )
    model.add_argument(
        "--model",
        help="a whole biLM: a published biLM's short name "
        f"({', '.join(PUBLISHED_MODELS)}; efml-<language code> for ELMoForManyLangs' "
        f"{len(PUBLISHED_ARCHIVES)} languages), a folder holding one (an elmo-export, an "
        f"ELMoForManyLangs model, {SHIPPED_BILM}) or a ZIP of either (as NLPL publishes them). "
        f"Default: the shipped biLM, {SHIPPED_BILM}",
    )
    model.add_argument(
        "--options-file",
        help="bilm-tf options.json, with --weight-file: a path, a URL or elmo_plugin://...; "
        "or a whole biLM as --model takes it, without --weight-file",
    )
    parser.add_argument("--weight-file", help="bilm-tf weights.hdf5, with --options-file")
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default="all",
        help="all layers, the top layer, or their average",
    )
    add_output_arguments(parser)
    parser.add_argument(
        "--batch-size", type=int, default=64, help="sentences of a biLM run at most"
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        help="token positions of a biLM run at most (sentences times the longest, markers "
        "included): bounds the memory; a longer sentence is embedded alone in windows",
    )
    parser.add_argument(
        "--cuda-device",
        type=int,
        default=-1,
        help="the GPU to run on, -1 for the CPU; under torchrun each process takes the GPU of "
        "its LOCAL_RANK",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="torch threads on the CPU. Default: OMP_NUM_THREADS when set, else the CPUs this "
        "process may use (its affinity mask within its cgroup's CPU quota, shared among "
        "torchrun's processes on the machine), or torch's count where set lower "
        "(torch.set_num_threads)",
    )
    add_execution_arguments(parser)


def check_arguments(args: argparse.Namespace, archive_files: List[str]) -> Optional[BilmFiles]:
    """Before any biLM or sentence is read: the flags that go together, the output (a file
    that can be written, not any input: `archive_files` are those an `--archive` reads), the
    input and the biLM's names. Returns the biLM's files (none for an `--archive`), resolved
    once, for `embed`."""
    check_cuda_device(args.cuda_device, "--cuda-device")
    execution_of(args)
    for flag in ("batch_size", "max_tokens", "threads"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            name = "--" + flag.replace("_", "-")
            raise ConfigurationError(f"{name} must be a positive integer, got {value}")
    if args.archive and args.weight_file:
        raise ConfigurationError("--weight-file goes with --options-file, not --archive")
    check_output(args.output_file, {"input file": args.input_file})
    check_text_file(args.input_file, "input file")
    files = None if args.archive else named_bilm(args)
    inputs = {} if files is None else _bilm_inputs(args, files)
    for path in archive_files:
        inputs[f"--archive file {path}" if path != args.archive else "--archive"] = path
    refuse_overwriting(args.output_file, inputs)
    return files


def named_bilm(args: argparse.Namespace) -> BilmFiles:
    """The biLM's files that `--model`, or `--options-file` with `--weight-file`, name (the
    shipped biLM when neither is given)."""
    if args.options_file:
        files = resolve_bilm(args.options_file, args.weight_file, "--options-file")
        return require_weights(files, "--options-file")
    if args.weight_file and not args.model:
        raise ConfigurationError("--weight-file goes with --options-file")
    files = resolve_bilm(args.model or SHIPPED_BILM, args.weight_file, "--model")
    return require_weights(files, "--model")


def _bilm_inputs(args: argparse.Namespace, files: BilmFiles) -> Dict[str, Optional[str]]:
    """The files the biLM is read from, by what named them, for the output to be checked
    against."""
    if args.options_file:
        return {"--options-file": files.options_file, "--weight-file": files.weight_file}
    return files_read(files, "--model")


def embed(
    args: argparse.Namespace, bilm: Optional[ElmoBiLm] = None, files: Optional[BilmFiles] = None
) -> None:
    """Embeds as `args` say, with `bilm` when given (an archive's), else that of `files` (as
    `check_arguments` resolved them) or of the options file; under `torchrun` as one process of
    the group (`elmo_plugin.embedding.bulk`)."""
    cuda_device, local_processes = _join_process_group(args.cuda_device)
    try:
        _use_usable_threads(cuda_device, local_processes, args.threads)
        setting = execution_of(args)
        if bilm is None:
            bilm = load_bilm(
                files or named_bilm(args), None, compute_dtype=setting.dtype, execution=setting
            )
        bilm.set_execution(setting)
        embed_file(
            bilm,
            args.input_file,
            args.output_file,
            args.output_format,
            args.batch_size,
            cuda_device,
            args.max_tokens,
            output=output_of(args),
        )
    finally:
        if local_processes:
            torch.distributed.destroy_process_group()


def _join_process_group(cuda_device: int) -> Tuple[int, int]:
    """Under `torchrun` (WORLD_SIZE over 1): joins the process group (NCCL on GPUs, gloo on
    the CPU) and returns the device of this process (its LOCAL_RANK's GPU) and the number of
    processes on this machine; else `(cuda_device, 0)`."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return cuda_device, 0
    backend = "nccl" if cuda_device >= 0 else "gloo"
    # A rank that finishes its share waits at a barrier for the others: hours on a long job.
    torch.distributed.init_process_group(backend, timeout=datetime.timedelta(days=7))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    local_processes = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    if cuda_device >= 0:
        cuda_device = local_rank
        torch.cuda.set_device(cuda_device)
    return cuda_device, local_processes


def _use_usable_threads(cuda_device: int, local_processes: int, threads: Optional[int]) -> None:
    """Sets and logs the torch threads: `threads` (--threads), else OMP_NUM_THREADS's, else
    the CPUs this process may really use, shared among the processes of this machine, or
    torch's count where that is lower (a caller's `torch.set_num_threads`)."""
    variable = os.environ.get(THREADS_VARIABLE, "")
    if threads is not None:
        found = "--threads"
    elif variable.isdigit() and int(variable) > 0:
        threads, found = int(variable), f"{THREADS_VARIABLE}={variable}"
    else:
        cpus, found = usable_cpus()
        share = max(1, cpus // max(1, local_processes))
        if local_processes > 1:
            found += f", shared by {local_processes} processes"
        threads = min(share, torch.get_num_threads())
        if threads < share:
            found += "; torch's count, set lower, kept"
    torch.set_num_threads(threads)
    device = "the CPU" if cuda_device < 0 else f"GPU {cuda_device}"
    logger.info("embedding on %s with %d torch threads (%s)", device, threads, found)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="elmo-embed", description=DESCRIPTION, epilog=EPILOG)
    add_arguments(parser, parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args.archive = None
    try:
        embed(args, files=check_arguments(args, []))
    except ConfigurationError as error:
        parser.exit(2, f"elmo-embed: error: {error}\n")


if __name__ == "__main__":
    main()
