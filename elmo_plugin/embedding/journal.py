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

import contextlib
import hashlib
import json
import os
import shutil
import struct
from dataclasses import dataclass
from typing import IO, Dict, Iterator, List, Tuple

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

import numpy

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import replaced_when_complete, require_space

MAGIC = b"ELMOBAT1"
JOB_FILE = "job.json"
LOCK_FILE = "lock"
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


def check_place(output_file: str, unheld: bool = True) -> None:
    """Before the work: the journal of `output_file` can go where it goes (no file there) and,
    with `unheld`, no other job holds it (`held`)."""
    folder = journal_folder(output_file)
    _refuse_a_file_there(folder, output_file)
    lock = os.path.join(folder, LOCK_FILE)
    if unheld and os.path.isfile(lock):
        with open(lock, "a+", encoding="utf-8") as handle:
            _lock(handle, folder, output_file)


@contextlib.contextmanager
def held(output_file: str) -> Iterator[str]:
    """Holds the journal folder of `output_file` for one job, made if missing and locked (a
    second job on the output is an error naming the process that holds it); yields it. When
    the block fails, a folder made here is removed unless it holds finished batches: a
    refused or failed run leaves nothing behind but work to resume."""
    folder = journal_folder(output_file)
    _refuse_a_file_there(folder, output_file)
    try:
        os.mkdir(folder)
        made = True
    except FileExistsError:
        made = False
    try:
        with _locked(folder, output_file):
            yield folder
    except BaseException:
        if made and os.path.isdir(folder) and not completed_batches(folder):
            remove_journal(folder)
        raise


def _refuse_a_file_there(folder: str, output_file: str) -> None:
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise ConfigurationError(
            f"{folder}, where the journal of the output {output_file} goes, is a file, not "
            "elmo-embed's journal folder; move it away"
        )


@contextlib.contextmanager
def _locked(folder: str, output_file: str) -> Iterator[None]:
    """The lock file of `folder` held, with this process's id in it for the message of another
    job; a lock file unlinked (a finishing job removed its journal) is taken again."""
    lock = os.path.join(folder, LOCK_FILE)
    while True:
        handle = open(lock, "a+", encoding="utf-8")
        try:
            _lock(handle, folder, output_file)
            if _same_inode(lock, handle):
                break
        except BaseException:
            handle.close()
            raise
        handle.close()
    try:
        handle.truncate(0)
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield
    finally:
        handle.close()


def _same_inode(path: str, handle: IO[str]) -> bool:
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(handle.fileno())
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _lock(handle: IO[str], folder: str, output_file: str) -> None:
    """Takes the lock of `handle` without waiting; held by another process, an error naming it."""
    if fcntl is None:  # not POSIX: no lock
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as error:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        raise ConfigurationError(
            f"another elmo-embed job (process {holder}) is writing the output {output_file} "
            f"(it holds {folder}); wait for it to finish or stop it, then run again"
        ) from error


def open_job(folder: str, job: Dict[str, str], create: bool) -> bool:
    """Checks that `folder` journals `job` (writing its `job.json` with `create`, the first
    process); returns whether it held an earlier run's job. Another job's journal is an error:
    it is never overwritten; nor is a folder of part files without `job.json` adopted."""
    path = os.path.join(folder, JOB_FILE)
    if os.path.exists(path):
        stored = _stored_job(path, folder)
        if stored != job:
            changed = sorted(key for key in job if stored.get(key) != job[key])
            raise ConfigurationError(
                f"{folder} holds the partial results of another embedding job into the same "
                f"output (it differs in: {', '.join(changed) or 'its keys'}); rerun the same "
                f"command to resume it, or delete {folder} to start afresh"
            )
        return True
    if not create:
        raise ConfigurationError(f"{path} is missing: the first process did not create it")
    if _part_files(folder):
        raise ConfigurationError(
            f"{folder} holds part files but no {JOB_FILE}: not a whole journal, so what they "
            f"hold cannot be told; delete {folder} to start afresh"
        )
    with replaced_when_complete(path) as partial, open(partial, "w", encoding="utf-8") as out:
        json.dump(job, out, sort_keys=True)
    return False


def _stored_job(path: str, folder: str) -> Dict[str, str]:
    try:
        with open(path, encoding="utf-8") as handle:
            stored = json.load(handle)
    except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
        stored = error
    if not isinstance(stored, dict):
        raise ConfigurationError(
            f"{path} is not the JSON object of an elmo-embed job (truncated or changed by "
            f"hand?); delete {folder} to start afresh"
        )
    return stored


def part_path(folder: str, rank: int) -> str:
    return os.path.join(folder, f"part-{rank}.bin")


def _part_files(folder: str) -> List[str]:
    names = sorted(n for n in os.listdir(folder) if n.startswith("part-") and n.endswith(".bin"))
    return [os.path.join(folder, name) for name in names]


def _records(path: str) -> Iterator[Tuple[int, int, int]]:
    """`(batch, start, end)` of each whole record of the part file `path`, in order, each
    checked against its digest; stops at a torn tail: a short record, or a last one whose
    digest does not match. A corrupt record before it is an error: what follows it cannot be
    trusted either."""
    size = os.path.getsize(path)
    with open(path, "rb") as part:
        start = 0
        while start + _HEADER.size <= size:
            part.seek(start)
            magic, batch, count, payload = _HEADER.unpack(part.read(_HEADER.size))
            if magic != MAGIC or payload < 0 or count < 0:
                raise _corrupt(path, start, "its header is not a record's")
            end = start + _HEADER.size + payload + _DIGEST_BYTES
            if end > size:
                return
            if not _digest_matches(part, start, end):
                if end == size:
                    return
                raise _corrupt(path, start, "its digest does not match")
            yield batch, start, end
            start = end


def _digest_matches(part: IO[bytes], start: int, end: int) -> bool:
    part.seek(start)
    body = part.read(end - start - _DIGEST_BYTES)
    return hashlib.blake2b(body, digest_size=_DIGEST_BYTES).digest() == part.read(_DIGEST_BYTES)


def _corrupt(path: str, start: int, why: str) -> ConfigurationError:
    folder = os.path.dirname(path)
    return ConfigurationError(
        f"{path}: the record at byte {start} is corrupt ({why}); the journal cannot be "
        f"trusted: delete {folder} to start afresh"
    )


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
