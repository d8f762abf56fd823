"""
The append-only record of a bulk embedding job (`elmo_plugin.embedding.bulk`), from which a
killed job resumes: a folder beside the output holding `job.json` (what the job embeds: a digest
of the input, the biLM and the settings) and one `part-<rank>.bin` per process, to which each
finished batch is appended as one record and flushed to disk before the next one starts.

A record: a header (`MAGIC`, the batch's number, its sentence count, the payload's length), the
payload (per sentence: its line number, the number of dimensions, the shape, the float32
values), and a 16-byte BLAKE2b digest of header and payload. A process killed while appending
leaves a short or unverifiable last record, which the next run drops (`truncate_torn_tail`) and
embeds again: a batch counts as done only when its whole record is on disk, so none is embedded
twice.
"""

import hashlib
import json
import os
import shutil
import struct
from dataclasses import dataclass
from typing import Dict, Iterator, List, Tuple

import numpy

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.atomic_files import replaced_when_complete, require_space

MAGIC = b"ELMOBAT1"
JOB_FILE = "job.json"
_HEADER = struct.Struct("<8sqqq")
_SENTENCE = struct.Struct("<qq")
_DIGEST_BYTES = 16


@dataclass(frozen=True)
class StoredSentence:
    """Where one sentence's layers lie in a part file."""

    path: str
    offset: int
    shape: Tuple[int, ...]

    def read(self) -> numpy.ndarray:
        count = int(numpy.prod(self.shape)) if self.shape else 1
        with open(self.path, "rb") as part:
            part.seek(self.offset)
            data = numpy.frombuffer(part.read(4 * count), dtype="<f4")
        return data.reshape(self.shape).astype(numpy.float32)


def journal_folder(output_file: str) -> str:
    """The journal of the job writing `output_file`: a hidden folder beside it whose name stays
    short whatever the output's (a 255-byte output name is legal)."""
    directory, name = os.path.split(os.path.realpath(output_file))
    digest = hashlib.blake2b(name.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()
    return os.path.join(directory, f".elmo-embed-{digest}")


def open_job(folder: str, job: Dict[str, str], create: bool) -> bool:
    """Checks that `folder` journals `job` (creating it with `create`, the first process);
    returns whether it held an earlier run's job. Another job's journal is an error: it is
    never overwritten."""
    path = os.path.join(folder, JOB_FILE)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            stored = json.load(handle)
        if stored != job:
            changed = sorted(key for key in job if stored.get(key) != job[key])
            raise ConfigurationError(
                f"{folder} holds the partial results of another embedding job into the same "
                f"output (it differs in: {', '.join(changed)}); rerun the same command to "
                f"resume it, or delete {folder} to start afresh"
            )
        return True
    if not create:
        raise ConfigurationError(f"{path} is missing: the first process did not create it")
    os.makedirs(folder, exist_ok=True)
    with replaced_when_complete(path) as partial, open(partial, "w", encoding="utf-8") as out:
        json.dump(job, out, sort_keys=True)
    return False


def part_path(folder: str, rank: int) -> str:
    return os.path.join(folder, f"part-{rank}.bin")


def _part_files(folder: str) -> List[str]:
    names = sorted(n for n in os.listdir(folder) if n.startswith("part-") and n.endswith(".bin"))
    return [os.path.join(folder, name) for name in names]


def _records(path: str) -> Iterator[Tuple[int, int, int]]:
    """`(batch, start, end)` of each whole record of the part file `path`, in order; stops at a
    torn tail: a short record, or a last one whose digest does not match."""
    size = os.path.getsize(path)
    with open(path, "rb") as part:
        start = 0
        while start + _HEADER.size <= size:
            part.seek(start)
            magic, batch, _, payload = _HEADER.unpack(part.read(_HEADER.size))
            end = start + _HEADER.size + payload + _DIGEST_BYTES
            if magic != MAGIC or payload < 0 or end > size:
                return
            if end == size and not _digest_matches(part, start, end):
                return
            yield batch, start, end
            start = end


def _digest_matches(part, start: int, end: int) -> bool:
    part.seek(start)
    body = part.read(end - start - _DIGEST_BYTES)
    return hashlib.blake2b(body, digest_size=_DIGEST_BYTES).digest() == part.read(_DIGEST_BYTES)


def completed_batches(folder: str) -> Dict[int, Tuple[str, int, int]]:
    """Each batch with a whole record in any part file: `(path, start, end)` of the record."""
    done: Dict[int, Tuple[str, int, int]] = {}
    for path in _part_files(folder):
        for batch, start, end in _records(path):
            done.setdefault(batch, (path, start, end))
    return done


def truncate_torn_tail(path: str) -> None:
    """Cuts the part file `path` after its last whole record (what a kill left half written)."""
    if not os.path.exists(path):
        return
    end = 0
    for _, _, end in _records(path):
        pass
    if end < os.path.getsize(path):
        with open(path, "r+b") as part:
            part.truncate(end)


def append_batch(path: str, batch: int, lines: List[int], layers: List[numpy.ndarray]) -> None:
    """Appends one batch's record to the part file `path` and flushes it to disk."""
    pieces: List[bytes] = []
    for line, array in zip(lines, layers):
        pieces.append(_SENTENCE.pack(line, array.ndim))
        pieces.append(struct.pack(f"<{array.ndim}q", *array.shape))
        pieces.append(numpy.ascontiguousarray(array, dtype="<f4").tobytes())
    payload = b"".join(pieces)
    body = _HEADER.pack(MAGIC, batch, len(lines), len(payload)) + payload
    record = body + hashlib.blake2b(body, digest_size=_DIGEST_BYTES).digest()
    require_space(path, len(record))
    with open(path, "ab") as part:
        part.write(record)
        part.flush()
        os.fsync(part.fileno())


def stored_sentences(record: Tuple[str, int, int]) -> Iterator[Tuple[int, StoredSentence]]:
    """`(line number, where its layers lie)` of each sentence of a record."""
    path, start, _ = record
    with open(path, "rb") as part:
        part.seek(start)
        _, _, count, _ = _HEADER.unpack(part.read(_HEADER.size))
        offset = start + _HEADER.size
        for _ in range(count):
            part.seek(offset)
            line, ndim = _SENTENCE.unpack(part.read(_SENTENCE.size))
            shape = struct.unpack(f"<{ndim}q", part.read(8 * ndim))
            offset += _SENTENCE.size + 8 * ndim
            yield line, StoredSentence(path, offset, tuple(shape))
            offset += 4 * int(numpy.prod(shape))


def remove_journal(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
