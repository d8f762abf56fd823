"""
`allennlp elmo-embed`: embed a text file (one tokenised sentence per line) with a biLM and write
every sentence's ELMo layers to hdf5, in the layout of bilm-tf's `dump_bilm_embeddings`: one
dataset per sentence, named by its 0-based line number, of shape `(L + 1, num_tokens, dim)`
(or `(num_tokens, dim)` for `--output-format top|average`), plus `sentence_to_index`, a JSON
map from each sentence's text to its dataset name, as AllenNLP 0.x's `elmo` command wrote.
"""

import argparse
import contextlib
import json
import logging
import os
import stat
from typing import Dict, Iterator, List, Optional, Tuple

import h5py
import numpy
import torch
from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError
from allennlp.common.tqdm import Tqdm
from allennlp.modules.elmo import batch_to_ids
from overrides import overrides

from elmo_plugin.archives import files_read, load_checked_archive
from elmo_plugin.elmo.atomic_files import (
    refuse_overwriting,
    replaced_when_complete,
    require_space,
)
from elmo_plugin.elmo import ElmoBiLm, load_bilm
from elmo_plugin.elmo.compute_dtype import COMPUTE_DTYPES, parse_compute_dtype
from elmo_plugin.elmo.package_files import SHIPPED_BILM
from elmo_plugin.text_files import text_lines

logger = logging.getLogger(__name__)

OUTPUT_FORMATS = ("all", "top", "average")


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
    if args.options_file and not args.weight_file:
        raise ConfigurationError("--options-file needs --weight-file")
    inputs = {"--options-file": args.options_file, "--weight-file": args.weight_file}
    for path in files_read(args.archive) if args.archive else []:
        inputs[f"--archive file {path}" if path != args.archive else "--archive"] = path
    refuse_overwriting(args.output_file, inputs)
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


def bilm_from_archive(archive_file: str, cuda_device: int = -1) -> ElmoBiLm:
    model = load_checked_archive(archive_file, cuda_device=cuda_device).model
    bilms = [module for module in model.modules() if isinstance(module, ElmoBiLm)]
    if not bilms:
        raise ConfigurationError(f"{archive_file}: the archived model has no ELMo biLM")
    return bilms[0]


def read_sentences(input_file: str) -> Iterator[Tuple[int, List[str]]]:
    """Yields `(line_number, tokens)`, 1-based; an empty line gives no tokens."""
    for number, line in enumerate(text_lines(input_file), start=1):
        yield number, line.split()


def _count_batches(input_file: str, batch_size: int) -> Optional[int]:
    """The number of batches in a regular file, for the progress bar; None for anything
    else (a pipe, `/dev/stdin`, `<(...)`, a URL), which can be read only once."""
    try:
        regular = stat.S_ISREG(os.stat(input_file).st_mode)
    except OSError:
        return None
    if not regular:
        return None
    with open(input_file, "rb") as handle:
        return -(-sum(1 for _ in handle) // batch_size)


def _batches(input_file: str, batch_size: int) -> Iterator[List[Tuple[int, List[str]]]]:
    batch: List[Tuple[int, List[str]]] = []
    for item in read_sentences(input_file):
        batch.append(item)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def embed_file(
    bilm: ElmoBiLm,
    input_file: str,
    output_file: str,
    output_format: str = "all",
    batch_size: int = 64,
    cuda_device: int = -1,
) -> int:
    """Embeds every line of `input_file` into `output_file`; returns the number of lines."""
    _check_arguments(input_file, output_file, output_format, batch_size)
    bilm.eval()
    if cuda_device >= 0:
        bilm.cuda(cuda_device)
    sentence_to_index: Dict[str, str] = {}
    count = 0
    with _replaced_when_complete(output_file) as out, torch.no_grad():
        batches = Tqdm.tqdm(
            _batches(input_file, batch_size),
            desc="embedding batches",
            total=_count_batches(input_file, batch_size),
        )
        for batch in batches:
            layers = [_format(one, output_format) for one in _embed_batch(bilm, batch, cuda_device)]
            require_space(output_file, sum(one.nbytes for one in layers))
            for (number, tokens), sentence_layers in zip(batch, layers):
                _check_finite(sentence_layers, input_file, number)
                _write_sentence(out, number, tokens, sentence_layers, input_file)
                sentence_to_index[" ".join(tokens)] = str(number - 1)
                count += 1
        _write_index(out, sentence_to_index, input_file, output_file)
    return count


def _check_arguments(
    input_file: str, output_file: str, output_format: str, batch_size: int
) -> None:
    if output_format not in OUTPUT_FORMATS:
        raise ConfigurationError(
            f"output format must be one of {OUTPUT_FORMATS}, got {output_format!r}"
        )
    if batch_size < 1:
        raise ConfigurationError(f"--batch-size must be a positive integer, got {batch_size}")
    refuse_overwriting(output_file, {"input file": input_file})


def _write_index(
    out: h5py.File, sentence_to_index: Dict[str, str], input_file: str, output_file: str
) -> None:
    if not sentence_to_index:
        logger.warning("%s has no lines: the output holds no sentences", input_file)
    index_json = json.dumps(sentence_to_index)
    require_space(output_file, len(index_json.encode("utf-8")))
    out.create_dataset("sentence_to_index", data=[index_json])


def _write_sentence(
    out: h5py.File, number: int, tokens: List[str], layers: numpy.ndarray, input_file: str
) -> None:
    if not tokens:
        logger.warning("%s, line %d is empty: its dataset has 0 tokens", input_file, number)
    out.create_dataset(str(number - 1), data=layers)


@contextlib.contextmanager
def _replaced_when_complete(output_file: str) -> Iterator[h5py.File]:
    """An hdf5 file written beside `output_file` and renamed onto it only once complete, so
    a failure or a kill half-way leaves what was there before intact."""
    with replaced_when_complete(output_file) as partial, h5py.File(partial, "w") as out:
        yield out


def _check_finite(layers: numpy.ndarray, input_file: str, number: int) -> None:
    bad = layers.size - int(numpy.isfinite(layers).sum())
    if bad:
        raise ConfigurationError(
            f"{input_file}, line {number}: the biLM gave {bad} non-finite (NaN or infinite) "
            "values for this sentence: its weights, finite but too large, overflow in "
            "the compute dtype; nothing was written"
        )


def _embed_batch(bilm: ElmoBiLm, batch, cuda_device: int) -> List[numpy.ndarray]:
    if not any(tokens for _, tokens in batch):
        return _empty_layers(bilm, len(batch))
    ids = batch_to_ids([tokens for _, tokens in batch])
    if cuda_device >= 0:
        ids = ids.cuda(cuda_device)
    # `(L + 1, batch, tokens + 2, dim)`; drop <S> and </S>.
    activations = torch.stack(bilm(ids)["activations"]).cpu().numpy()
    return [activations[:, row, 1 : len(tokens) + 1] for row, (_, tokens) in enumerate(batch)]


def _empty_layers(bilm: ElmoBiLm, count: int) -> List[numpy.ndarray]:
    # batch_to_ids of only empty sentences has no token axis for the biLM to run over.
    return [numpy.zeros((bilm.num_layers, 0, bilm.get_output_dim()), dtype=numpy.float32)] * count


def _format(layers: numpy.ndarray, output_format: str) -> numpy.ndarray:
    if output_format == "top":
        return layers[-1]
    if output_format == "average":
        return layers.mean(axis=0)
    return layers
