"""
Bulk embedding into the hdf5 layout of `embeddings_file`, what `elmo-embed` and
`ElmoEmbedder.embed_file` run:

- The sentences are sorted by length (longest first, ties in line order) and cut into batches
  of at most `batch_size` sentences and `max_tokens` token positions (sentences times the
  longest, markers included): little padding, few steps per sentence. A sentence longer than
  the budget is a batch alone, embedded in windows (`long_sequences`).
- Each finished batch is appended to a journal beside the output (`journal`); a job killed at
  any point, run again with the same command, embeds only the batches not yet on disk and
  writes the same output, byte for byte. The output is written last, in line order, from the
  journal, and renamed into place; then the journal is removed.
- Under `torchrun` (a `torch.distributed` process group initialised), batch `b` is embedded by
  rank `b % world_size`; rank 0 writes the output once all are done. The plan and each batch
  are the same as one process's, so is the output.
"""

import hashlib
import json
import logging
import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

import torch

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import check_output_file
from elmo_plugin.elmo.formats.naming.package_files import refuse_overwriting
from elmo_plugin.embedding import journal
from elmo_plugin.embedding.embeddings_file import (
    InputFile,
    Line,
    check_output_format,
    check_sentence_keys,
    input_name,
    read_lines,
)
from elmo_plugin.embedding.outputs import EmbeddingOutput
from elmo_plugin.embedding.progress import Progress

if TYPE_CHECKING:
    from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder

logger = logging.getLogger(__name__)

# A batch: the line numbers of its sentences.
Batch = List[int]


def plan_batches(
    lengths: List[int], batch_size: int, max_tokens: int, by_length: bool = True
) -> List[Batch]:
    """Batches of line numbers: at most `batch_size` sentences and `max_tokens` positions
    (count times the longest, plus the two markers) each, or one sentence longer than that;
    the sentences sorted by length (longest first, ties in line order), or in file order."""
    order = list(range(len(lengths)))
    if by_length:
        order.sort(key=lambda number: (-lengths[number], number))
    batches: List[Batch] = []
    batch: Batch = []
    width = 0
    for number in order:
        wider = max(width, lengths[number] + 2)
        if batch and (len(batch) == batch_size or (len(batch) + 1) * wider > max_tokens):
            batches.append(batch)
            batch, wider = [], lengths[number] + 2
        batch.append(number)
        width = wider
    if batch:
        batches.append(batch)
    return batches


def embed_planned_batch(embedder: "ElmoEmbedder", sentences: List[List[str]]) -> List[Any]:
    """The layers of a planned batch, the same whatever was embedded before it: the character
    CNN's token cache is emptied first, since an encoding remembered from another batch may
    differ in the last bit (a product over other rows; seen with torch 1.12's MKL), and a
    resumed or sharded job must give every batch the bytes of an uninterrupted one."""
    embedder.elmo_bilm.character_encoder.clear_cache()
    return embedder.embed_batch(sentences)


def distributed_rank() -> Tuple[int, int]:
    """`(rank, world size)` of an initialised `torch.distributed` process group, else (0, 1)."""
    distributed = torch.distributed
    if distributed.is_available() and distributed.is_initialized():
        return distributed.get_rank(), distributed.get_world_size()
    return 0, 1


def _barrier() -> None:
    if distributed_rank()[1] > 1:
        torch.distributed.barrier()


def embed_in_bulk(
    embedder: "ElmoEmbedder",
    input_file: InputFile,
    output_file: str,
    output_format: str = "all",
    batch_size: int = 64,
    forget_sentences: bool = False,
    use_sentence_keys: bool = False,
    progress_interval: float = 30.0,
    output: EmbeddingOutput = EmbeddingOutput(),
) -> int:
    """
    Embeds each line of `input_file` with `embedder` (its `max_tokens` the budget of a run)
    into the hdf5 file `output_file`, as the module says. Returns the number of lines.

    # Parameters

    embedder : `ElmoEmbedder`
    input_file : `str`, `os.PathLike` or a text file object
    output_file : `str`
    output_format : `str`, optional (default = `"all"`)
    batch_size : `int`, optional (default = `64`)
    forget_sentences : `bool`, optional (default = `False`)
    use_sentence_keys : `bool`, optional (default = `False`)
    progress_interval : `float`, optional (default = `30.0`)
        Seconds between two progress lines in the log.
    output : `EmbeddingOutput`, optional (default = per-token float32, one file)
        Pooling, dtype, file format and shards (`elmo_plugin.embedding.outputs`).
    """
    check_output_format(output_format)
    output = output.checked(output_file, output_format, use_sentence_keys)
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ConfigurationError(f"batch_size must be a positive integer, got {batch_size!r}")
    source = input_name(input_file)
    check_output(output_file, {"input file": source})
    lines = read_lines(input_file)
    if use_sentence_keys:
        check_sentence_keys(lines, source)
    settings = dict(
        output_format=output_format,
        batch_size=batch_size,
        max_tokens=embedder.max_tokens,
        forget_sentences=forget_sentences,
        use_sentence_keys=use_sentence_keys,
        **output.settings(),
    )
    job = _job(embedder, lines, settings)
    if distributed_rank()[0] == 0:
        with journal.held(output_file) as folder:
            _run_job(embedder, lines, source, output_file, folder, job, progress_interval, output)
    else:
        folder = journal.journal_folder(output_file)
        _run_job(embedder, lines, source, output_file, folder, job, progress_interval, output)
    return len(lines)


def check_output(output_file: str, inputs: Mapping[str, Optional[str]]) -> None:
    """Before the work: `output_file` can be written (a regular file or none, in a writable
    folder that exists), is none of `inputs` (what each is, to its name) and its journal can
    go beside it."""
    check_output_file(output_file, "output file")
    # The other ranks of a torchrun group share rank 0's journal, which it may hold already.
    journal.check_place(output_file, unheld=int(os.environ.get("RANK", "0")) == 0)
    refuse_overwriting(output_file, inputs)


def _run_job(
    embedder: "ElmoEmbedder",
    lines: List[Line],
    source: Optional[str],
    output_file: str,
    folder: str,
    job: Dict[str, str],
    progress_interval: float,
    output: EmbeddingOutput,
) -> None:
    """This process's share of the job journaled in `folder`, then its file of the output
    (`EmbeddingOutput.writes_on`)."""
    settings = json.loads(job["settings"])
    lengths = [len(text.split()) for _, text in lines]
    plan = plan_batches(lengths, settings["batch_size"], settings["max_tokens"])
    rank, world_size = distributed_rank()
    if rank == 0:
        resumed = journal.open_job(folder, job, create=True)
        logger.info(
            "%s journal of this job (%d batches): %s; if stopped, run the same command again "
            "to resume",
            "resuming the" if resumed else "writing the",
            len(plan),
            folder,
        )
    _barrier()
    if rank != 0:
        journal.open_job(folder, job, create=False)
    own_part = journal.part_path(folder, rank)
    journal.truncate_torn_tail(own_part)
    done = journal.completed_batches(folder)
    mine = [number for number in range(len(plan)) if number % world_size == rank]
    progress = Progress(
        rank,
        world_size,
        sum(len(plan[b]) for b in mine),
        sum(lengths[line] for b in mine for line in plan[b]),
        progress_interval,
    )
    finished = [b for b in mine if b in done]
    progress.resumed(
        sum(len(plan[b]) for b in finished),
        sum(lengths[line] for b in finished for line in plan[b]),
    )
    output_format = settings["output_format"]
    for number in mine:
        if number in done:
            continue
        batch = plan[number]
        layers = embed_planned_batch(embedder, [lines[line][1].split() for line in batch])
        formatted = [
            output.format(one, output_format, source, line) for one, line in zip(layers, batch)
        ]
        journal.append_batch(own_part, number, batch, formatted)
        progress.advance(len(batch), sum(lengths[line] for line in batch))
    progress.finish()
    _barrier()
    if output.writes_on(rank):
        _write_output(output, output_file, folder, lines, source, settings, rank, world_size)
    _barrier()
    if rank == 0:
        output.finish(output_file, folder, len(lines), world_size)
        journal.remove_journal(folder)
    _barrier()


def _job(
    embedder: "ElmoEmbedder", lines: List[Line], settings: Dict[str, object]
) -> Dict[str, str]:
    """What identifies a job, everything its output depends on: digests of the input's lines
    and of the biLM (options, weights, compute dtype), the tables that index its input (an
    ELMoForManyLangs model's), how it runs (`Execution`) and the settings."""
    text = hashlib.blake2b(digest_size=16)
    for _, line in lines:
        text.update(line.encode("utf-8", "surrogatepass") + b"\n")
    bilm = embedder.elmo_bilm
    ids = getattr(bilm, "ids", None)
    return {
        "input": f"{len(lines)} lines, blake2b {text.hexdigest()}",
        "bilm": bilm.digest().hex(),
        "tables": "" if ids is None else str(ids.digest),
        "execution": json.dumps(bilm.execution.paths(), sort_keys=True),
        "settings": json.dumps(settings, sort_keys=True),
    }


def _write_output(
    output: EmbeddingOutput,
    output_file: str,
    folder: str,
    lines: List[Line],
    source: Optional[str],
    settings: Dict[str, object],
    rank: int,
    world_size: int,
) -> None:
    """This process's output (`EmbeddingOutput.write`) from the journal, in line order."""
    stored: Dict[int, journal.StoredSentence] = {}
    for record in journal.completed_batches(folder).values():
        stored.update(journal.stored_sentences(record))
    missing = [number for number, _ in lines if number not in stored]
    if missing:
        raise ConfigurationError(
            f"{folder} lacks the layers of {len(missing)} lines (line {missing[0] + 1} first): "
            "was it changed by hand? Delete it and run again"
        )
    output.write(
        output_file,
        lines,
        lambda number: stored[number].read(),
        source,
        bool(settings["forget_sentences"]),
        bool(settings["use_sentence_keys"]),
        folder,
        rank,
        world_size,
    )
