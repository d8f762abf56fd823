"""
`elmo-embed --shards`: under `torchrun`, each process writes its own file (a shard) of a
contiguous range of lines, so that no single process funnels every vector into one file; the
output named on the command line becomes a JSON manifest listing the shards, their line ranges,
sizes and SHA-256, written last by rank 0. `open_embeddings` reads a manifest (checking each
shard against it), an hdf5 or a Parquet output alike: one file of lines in order.

Shard `r` of `n` holds lines `[r * N // n, (r + 1) * N // n)` and is named
`<manifest without .json>-<r>-of-<n>.<hdf5|parquet>` beside the manifest. A written shard is
recorded in the job's journal (`shard-<r>-of-<n>.json`, its size and SHA-256); a rerun after a
kill rewrites only the shards not recorded there, or changed since.
"""

import json
import os
from typing import Dict, Iterator, List, NamedTuple, Tuple

import h5py
import numpy

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import replaced_when_complete
from elmo_plugin.elmo.files.file_sets import fingerprint
from elmo_plugin.embedding.parquet_output import read_parquet

MANIFEST_FORMAT = "elmo-embed shards"
MANIFEST_VERSION = 1
HDF5, PARQUET = "hdf5", "parquet"
FILE_FORMATS = (HDF5, PARQUET)
_MANIFEST_SUFFIX = ".json"
_INDEX_DATASET = "sentence_to_index"


def file_format_of(path: str) -> str:
    """The file format a path's extension names: Parquet for `.parquet`/`.pq`, else hdf5."""
    return PARQUET if path.lower().endswith((".parquet", ".pq")) else HDF5


def line_range(rank: int, world_size: int, lines: int) -> Tuple[int, int]:
    """`[start, end)` of the lines of shard `rank` of `world_size`."""
    return rank * lines // world_size, (rank + 1) * lines // world_size


def shard_path(manifest: str, rank: int, world_size: int, file_format: str) -> str:
    stem = manifest[: -len(_MANIFEST_SUFFIX)] if manifest.endswith(_MANIFEST_SUFFIX) else manifest
    return f"{stem}-{rank:05d}-of-{world_size:05d}.{file_format}"


def _record_path(journal_folder: str, rank: int, world_size: int) -> str:
    return os.path.join(journal_folder, f"shard-{rank}-of-{world_size}.json")


def shard_is_written(journal_folder: str, path: str, rank: int, world_size: int) -> bool:
    """Whether this job's journal records shard `rank` as written, and `path` is still it."""
    record = _record_path(journal_folder, rank, world_size)
    if not (os.path.exists(record) and os.path.exists(path)):
        return False
    with open(record, encoding="utf-8") as handle:
        return json.load(handle) == fingerprint(path)


def record_shard(journal_folder: str, path: str, rank: int, world_size: int) -> None:
    with replaced_when_complete(_record_path(journal_folder, rank, world_size)) as partial:
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(fingerprint(path), handle)


def write_manifest(
    manifest: str, journal_folder: str, lines: int, world_size: int, file_format: str
) -> None:
    """The manifest of the `world_size` shards the journal records (rank 0, once all are)."""
    shards = []
    for rank in range(world_size):
        path = shard_path(manifest, rank, world_size, file_format)
        with open(_record_path(journal_folder, rank, world_size), encoding="utf-8") as handle:
            written = json.load(handle)
        shards.append(
            {
                "file": os.path.basename(path),
                "lines": list(line_range(rank, world_size, lines)),
                **written,
            }
        )
    content = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "file_format": file_format,
        "lines": lines,
        "shards": shards,
    }
    with replaced_when_complete(manifest) as partial:
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(content, handle, indent=1)


class _Part(NamedTuple):
    path: str
    file_format: str
    start: int
    end: int


class Embeddings:
    """
    The arrays of an `elmo-embed` output, one a line, in line order, whether one hdf5 or
    Parquet file or the shards of a manifest: `len()`, iteration, and `[line number]`.
    Parquet parts are read a row group at a time.
    """

    def __init__(self, parts: List[_Part]) -> None:
        self._parts = parts

    def __len__(self) -> int:
        return sum(part.end - part.start for part in self._parts)

    def __iter__(self) -> Iterator[numpy.ndarray]:
        for part in self._parts:
            yield from _part_arrays(part)

    def __getitem__(self, line: int) -> numpy.ndarray:
        for part in self._parts:
            if part.start <= line < part.end:
                if part.file_format == HDF5:
                    with h5py.File(part.path, "r") as hdf5:
                        return hdf5[str(line)][()]
                for number, array in enumerate(_part_arrays(part), part.start):
                    if number == line:
                        return array
        raise IndexError(f"line {line} is not in [0, {len(self)})")


def open_embeddings(path: str) -> Embeddings:
    """The output `path` of `elmo-embed`: a shards manifest (each shard's size and SHA-256
    checked against it), an hdf5 file with datasets named by line number, or a Parquet file."""
    if not os.path.exists(path):
        raise ConfigurationError(f"{path} does not exist")
    if _is_manifest(path):
        return Embeddings(_manifest_parts(path))
    if file_format_of(path) == PARQUET:
        return Embeddings([_Part(path, PARQUET, 0, _parquet_rows(path))])
    return Embeddings([_Part(path, HDF5, 0, _hdf5_lines(path))])


def _is_manifest(path: str) -> bool:
    with open(path, "rb") as handle:
        return handle.read(1) == b"{"


def _manifest_parts(path: str) -> List[_Part]:
    with open(path, encoding="utf-8") as handle:
        manifest = json.load(handle)
    if manifest.get("format") != MANIFEST_FORMAT or manifest.get("version") != MANIFEST_VERSION:
        raise ConfigurationError(
            f"{path}: not an elmo-embed shards manifest of version {MANIFEST_VERSION} "
            f"(format {manifest.get('format')!r}, version {manifest.get('version')!r})"
        )
    folder = os.path.dirname(os.path.abspath(path))
    parts: List[_Part] = []
    for shard in manifest["shards"]:
        shard_file = os.path.join(folder, shard["file"])
        expected: Dict[str, object] = {"bytes": shard["bytes"], "sha256": shard["sha256"]}
        if not os.path.exists(shard_file) or fingerprint(shard_file) != expected:
            raise ConfigurationError(
                f"{path}: its shard {shard_file} is missing, or its size or SHA-256 differs "
                "from the manifest's (changed or replaced since): rerun elmo-embed"
            )
        parts.append(_Part(shard_file, manifest["file_format"], *shard["lines"]))
    return parts


def _part_arrays(part: _Part) -> Iterator[numpy.ndarray]:
    if part.file_format == HDF5:
        with h5py.File(part.path, "r") as hdf5:
            for line in range(part.start, part.end):
                yield hdf5[str(line)][()]
        return
    expected = part.start
    for number, _, array in read_parquet(part.path):
        if number != expected:
            raise ConfigurationError(f"{part.path}: row of line {number} where {expected} was")
        expected += 1
        yield array


def _parquet_rows(path: str) -> int:
    import pyarrow.parquet

    return int(pyarrow.parquet.ParquetFile(path).metadata.num_rows)


def _hdf5_lines(path: str) -> int:
    with h5py.File(path, "r") as hdf5:
        names = [name for name in hdf5 if name != _INDEX_DATASET]
    if not all(name.isdigit() for name in names):
        raise ConfigurationError(
            f"{path}: its datasets are named by sentence (use_sentence_keys), not line "
            "number: read it with h5py and its keys"
        )
    return len(names)
