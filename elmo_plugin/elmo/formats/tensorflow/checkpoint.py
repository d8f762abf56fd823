"""
TensorFlow's V2 checkpoints read without TensorFlow: `PREFIX.index`, a sorted string table
(`table`) whose empty key holds a `BundleHeaderProto` and whose other keys name the tensors,
each with its `BundleEntryProto` (dtype, shape, shard, offset, size, masked CRC-32C);
`PREFIX.data-0000k-of-0000n`, the tensors' raw little-endian bytes. Opening reads the index
alone, so that a checkpoint with a published softmax of a million rows opens in a moment; a
tensor is memory-mapped from its shard when first read, and its CRC checked then, as
TensorFlow's `BundleReader` does.
"""

from dataclasses import dataclass
from typing import Dict, List, Set, Tuple

import numpy

from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.formats.tensorflow.crc32c import crc32c, masked
from elmo_plugin.elmo.formats.tensorflow.table import read_table
from elmo_plugin.elmo.formats.tensorflow.wire import WireError, parse, signed
from elmo_plugin.elmo.files.zip_archives import is_file, open_file
from elmo_plugin.elmo.formats.naming.bilm_formats import INDEX_SUFFIX

# TensorFlow's DataType numbers (types.proto) for the tensors numpy holds as they are stored.
NUMPY_DTYPES: Dict[int, str] = {
    1: "<f4",
    2: "<f8",
    3: "<i4",
    4: "u1",
    5: "<i2",
    6: "i1",
    9: "<i8",
    10: "?",
    17: "<u2",
    19: "<f2",
    22: "<u4",
    23: "<u8",
}
_LITTLE_ENDIAN = 0


@dataclass(frozen=True)
class TensorEntry:
    """Where a tensor's bytes are and what they hold (`BundleEntryProto`)."""

    dtype: int
    shape: Tuple[int, ...]
    shard: int
    offset: int
    size: int
    crc: int
    sliced: bool


def data_file(prefix: str, shard: int, shards: int) -> str:
    return f"{prefix}.data-{shard:05d}-of-{shards:05d}"


class Checkpoint:
    """
    The TensorFlow V2 checkpoint `prefix` (its files are `prefix.index` and
    `prefix.data-*`), on disk or in a ZIP archive (`zip_archives`).
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.index_file = prefix + INDEX_SUFFIX
        if not is_file(self.index_file):
            raise MissingFileError(f"{self.index_file}: no such TensorFlow checkpoint index")
        with open_file(self.index_file) as handle:
            contents = handle.read()
        try:
            table = read_table(contents)
            self.shards = _header_shards(table.pop(b"", b""))
            self._entries = {key.decode("utf-8"): _entry(value) for key, value in table.items()}
        except (WireError, UnicodeDecodeError) as error:
            raise ConfigurationError(
                f"{self.index_file}: not a TensorFlow V2 checkpoint index ({error})"
            ) from error
        self._shard_bytes: Dict[int, numpy.ndarray] = {}
        self._checked: Set[str] = set()

    def names(self) -> List[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def entry(self, name: str) -> TensorEntry:
        if name not in self._entries:
            raise ConfigurationError(
                f"{self.index_file}: the checkpoint holds no tensor {name!r} (it has "
                f"{len(self._entries)}, e.g. {', '.join(self.names()[:5])})"
            )
        return self._entries[name]

    def shape(self, name: str) -> Tuple[int, ...]:
        return self.entry(name).shape

    def tensor(self, name: str) -> numpy.ndarray:
        """The tensor `name`, read-only, memory-mapped where its shard is a file on disk; its
        CRC-32C is checked the first time it is read."""
        entry = self.entry(name)
        where = f"{self.index_file}: tensor {name!r}"
        if entry.sliced:
            raise ConfigurationError(f"{where} is saved in slices (a partitioned variable)")
        if entry.dtype not in NUMPY_DTYPES:
            raise ConfigurationError(
                f"{where} has TensorFlow dtype {entry.dtype}; expected a number type "
                f"({sorted(NUMPY_DTYPES)})"
            )
        dtype = numpy.dtype(NUMPY_DTYPES[entry.dtype])
        count = int(numpy.prod(entry.shape, dtype=numpy.int64))
        if count * dtype.itemsize != entry.size:
            raise ConfigurationError(
                f"{where} has {entry.size} bytes, but shape {entry.shape} of {dtype} needs "
                f"{count * dtype.itemsize}"
            )
        raw = self._bytes(entry, where)
        if name not in self._checked:
            if masked(crc32c(raw)) != entry.crc:
                raise ConfigurationError(
                    f"{where} fails its CRC-32C check: the data file "
                    f"{data_file(self.prefix, entry.shard, self.shards)} is corrupt"
                )
            self._checked.add(name)
        return raw.view(dtype).reshape(entry.shape)

    def _bytes(self, entry: TensorEntry, where: str) -> numpy.ndarray:
        shard = self._shard(entry.shard, where)
        if entry.offset + entry.size > len(shard):
            raise ConfigurationError(
                f"{where} lies at bytes {entry.offset}-{entry.offset + entry.size} of its data "
                f"file, which has {len(shard)}: is it truncated?"
            )
        return shard[entry.offset : entry.offset + entry.size]

    def _shard(self, shard: int, where: str) -> numpy.ndarray:
        if shard not in self._shard_bytes:
            if not 0 <= shard < self.shards:
                raise ConfigurationError(f"{where} is in shard {shard} of {self.shards}")
            path = data_file(self.prefix, shard, self.shards)
            self._shard_bytes[shard] = _mapped(path)
        return self._shard_bytes[shard]


def _mapped(path: str) -> numpy.ndarray:
    """The bytes of `path`: memory-mapped from disk, or read from its ZIP archive."""
    if not is_file(path):
        raise MissingFileError(f"{path}: the checkpoint's data file is not there")
    try:
        return numpy.memmap(path, dtype=numpy.uint8, mode="r")
    except (OSError, ValueError):  # a ZIP member, or an empty file numpy cannot map
        with open_file(path) as handle:
            return numpy.frombuffer(handle.read(), dtype=numpy.uint8)


def _header_shards(header: bytes) -> int:
    """The number of data files, from the `BundleHeaderProto`."""
    fields = parse(header)
    endianness = fields.get(2, [_LITTLE_ENDIAN])[-1]
    if endianness != _LITTLE_ENDIAN:
        raise WireError("the checkpoint was written big-endian")
    shards = int(fields.get(1, [1])[-1])
    if shards < 1:
        raise WireError(f"its header names {shards} data files")
    return shards


def _entry(message: bytes) -> TensorEntry:
    fields = parse(message)

    def number(field: int) -> int:
        value = fields.get(field, [0])[-1]
        if not isinstance(value, int):
            raise WireError(f"field {field} of a tensor entry is not a number")
        return signed(value)

    shape = fields.get(2, [b""])[-1]
    if not isinstance(shape, bytes):
        raise WireError("a tensor entry's shape is not a message")
    return TensorEntry(
        dtype=number(1),
        shape=_shape(shape),
        shard=number(3),
        offset=number(4),
        size=number(5),
        crc=number(6),
        sliced=7 in fields,
    )


def _shape(message: bytes) -> Tuple[int, ...]:
    """A `TensorShapeProto`'s sizes (field 2, each a `Dim` whose field 1 is the size)."""
    sizes = []
    for dim in parse(message).get(2, []):
        if not isinstance(dim, bytes):
            raise WireError("a shape's dimension is not a message")
        size = signed(int(parse(dim).get(1, [0])[-1]))
        if size < 0:
            raise WireError(f"a shape has the unknown size {size}")
        sizes.append(size)
    return tuple(sizes)
