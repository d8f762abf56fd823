"""
The sorted string table (LevelDB's format, which TensorFlow's `table_builder` writes) that a
checkpoint's `.index` file is: a footer naming the index block, whose entries name the data
blocks, whose entries are the table's keys and values. A checkpoint's blocks are written
uncompressed; each block's trailer holds its type and masked CRC-32C, checked here.
"""

import struct
from typing import Dict, Iterator, Tuple

import numpy

from elmo_plugin.elmo.formats.tensorflow.crc32c import crc32c, masked
from elmo_plugin.elmo.formats.tensorflow.wire import WireError, varint

_MAGIC = 0xDB4775248B80FB57
_FOOTER_BYTES = 48
_TRAILER_BYTES = 5  # the block's type (0: uncompressed) and masked CRC
_UNCOMPRESSED = 0


def read_table(data: bytes) -> Dict[bytes, bytes]:
    """Every key and value of the table `data`; a `WireError` says what is wrong."""
    if len(data) < _FOOTER_BYTES:
        raise WireError(f"{len(data)} bytes, shorter than a table's {_FOOTER_BYTES}-byte footer")
    footer = data[-_FOOTER_BYTES:]
    if struct.unpack("<Q", footer[-8:])[0] != _MAGIC:
        raise WireError("its last 8 bytes are not a TensorFlow table's magic number")
    _, position = _handle(footer, 0)  # the meta index, which checkpoints leave empty
    index_handle, _ = _handle(footer, position)
    table: Dict[bytes, bytes] = {}
    for _, block_handle in _entries(_block(data, index_handle)):
        table.update(_entries(_block(data, _handle(block_handle, 0)[0])))
    return table


def _handle(data: bytes, position: int) -> Tuple[Tuple[int, int], int]:
    offset, position = varint(data, position)
    size, position = varint(data, position)
    return (offset, size), position


def _block(data: bytes, handle: Tuple[int, int]) -> bytes:
    offset, size = handle
    end = offset + size
    if end + _TRAILER_BYTES > len(data):
        raise WireError(f"a block at byte {offset} runs past the end of the file")
    kind = data[end]
    if kind != _UNCOMPRESSED:
        raise WireError(f"the block at byte {offset} is compressed (type {kind}); expected none")
    stored = struct.unpack_from("<I", data, end + 1)[0]
    actual = masked(crc32c(numpy.frombuffer(data[offset : end + 1], numpy.uint8)))
    if stored != actual:
        raise WireError(f"the block at byte {offset} fails its CRC-32C check (corrupt)")
    return data[offset:end]


def _entries(block: bytes) -> Iterator[Tuple[bytes, bytes]]:
    """The block's keys (each sharing a prefix with the one before) and values, in order."""
    if len(block) < 4:
        raise WireError("a block shorter than its restart count")
    restarts = struct.unpack_from("<I", block, len(block) - 4)[0]
    end = len(block) - 4 * (restarts + 1)
    if end < 0:
        raise WireError(f"a block claims {restarts} restart points, more than it can hold")
    position, key = 0, b""
    while position < end:
        shared, position = varint(block, position)
        unshared, position = varint(block, position)
        value_length, position = varint(block, position)
        if shared > len(key) or position + unshared + value_length > end:
            raise WireError(f"a block entry at byte {position} runs past its block")
        key = key[:shared] + block[position : position + unshared]
        position += unshared
        yield key, block[position : position + value_length]
        position += value_length
