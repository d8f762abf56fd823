"""
CRC-32C (Castagnoli), as TensorFlow checks its checkpoints with, in numpy alone: the core takes
no dependency beyond torch, numpy and h5py, and a byte-at-a-time loop in Python would take
minutes on a published softmax. The bytes are cut into many equal chunks whose CRC registers
advance together, four bytes of every chunk per numpy step (slicing-by-4 tables); the chunks'
registers are then folded pairwise, the left one moved past its right neighbour's bytes by a
linear map over GF(2) (appending n zero bytes to a CRC register is a 32 x 32 bit matrix).
"""

from functools import lru_cache

import numpy

_POLYNOMIAL = 0x82F63B78  # Castagnoli's, bit-reversed
_ALL_ONES = 0xFFFFFFFF
# TensorFlow stores a CRC "masked", so that a CRC of data holding CRCs is not degenerate.
_MASK_DELTA = 0xA282EAD8
_MOST_CHUNKS = 1 << 16  # enough that each numpy step does real work, few enough to fold
_SHORTEST_CHUNK = 1 << 10
_BLOCK = 1 << 10  # bytes of every chunk brought together (transposed) at a time


def _tables() -> numpy.ndarray:
    """Slicing-by-4: table k moves a byte past k further zero bytes."""
    table = numpy.arange(256, dtype=numpy.uint32)
    for _ in range(8):
        table = numpy.where(table & 1, (table >> 1) ^ _POLYNOMIAL, table >> 1)
    tables = [table.astype(numpy.uint32)]
    for _ in range(3):
        tables.append((tables[-1] >> 8) ^ tables[0][tables[-1] & 0xFF])
    return numpy.stack(tables)


_TABLES = _tables()


def _advance_bytes(registers: numpy.ndarray, rows: numpy.ndarray) -> numpy.ndarray:
    """Each register moved past its row of bytes, one byte at a time (short inputs)."""
    for column in rows.T:
        registers = _TABLES[0][(registers ^ column) & 0xFF] ^ (registers >> 8)
    return registers


def _advance_words(registers: numpy.ndarray, rows: numpy.ndarray) -> numpy.ndarray:
    """Each register moved past its row of bytes (a multiple of 4 long), a word at a time."""
    t0, t1, t2, t3 = _TABLES
    for start in range(0, rows.shape[1], _BLOCK):
        words = numpy.ascontiguousarray(rows[:, start : start + _BLOCK]).view("<u4")
        for word in numpy.ascontiguousarray(words.T):
            value = registers ^ word
            registers = (
                t3[value & 0xFF]
                ^ t2[(value >> 8) & 0xFF]
                ^ t1[(value >> 16) & 0xFF]
                ^ t0[value >> 24]
            )
    return registers


@lru_cache(maxsize=128)
def _zeros_map(length: int) -> numpy.ndarray:
    """Byte tables (4 x 256) of the linear map that appending `length` zero bytes is."""
    basis = numpy.array([1 << bit for bit in range(32)], dtype=numpy.uint32)
    images = _past_zeros(basis, length)
    tables = numpy.zeros((4, 256), dtype=numpy.uint32)
    for value in range(1, 256):
        low = value & -value  # the lowest set bit: tables[b, value] = tables[b, rest] ^ image
        for byte in range(4):
            tables[byte, value] = (
                tables[byte, value ^ low] ^ images[byte * 8 + low.bit_length() - 1]
            )
    return tables


def _past_zeros(registers: numpy.ndarray, length: int) -> numpy.ndarray:
    """Registers moved past `length` zero bytes, by halving: log2(length) small steps."""
    if length <= 4:
        return _advance_bytes(registers, numpy.zeros((len(registers), length), numpy.uint8))
    half = _apply(_zeros_map(length // 2), registers)
    doubled = _apply(_zeros_map(length // 2), half)
    return _past_zeros(doubled, length % 2) if length % 2 else doubled


def _apply(tables: numpy.ndarray, registers: numpy.ndarray) -> numpy.ndarray:
    return (
        tables[0, registers & 0xFF]
        ^ tables[1, (registers >> 8) & 0xFF]
        ^ tables[2, (registers >> 16) & 0xFF]
        ^ tables[3, registers >> 24]
    )


def _fold(registers: numpy.ndarray, chunk: int) -> int:
    """The register of the chunks in a row, each `chunk` bytes long, from each one's own
    register (each computed from zero)."""
    while len(registers) > 1:
        if len(registers) % 2:
            # A zero register in front: zero bytes before the data leave a zero-started CRC as
            # it is, so the fold's result is unchanged.
            registers = numpy.concatenate([numpy.zeros(1, numpy.uint32), registers])
        registers = _apply(_zeros_map(chunk), registers[0::2]) ^ registers[1::2]
        chunk *= 2
    return int(registers[0])


def crc32c(data: numpy.ndarray) -> int:
    """The CRC-32C of the bytes of `data` (any contiguous array, e.g. a memory map's view)."""
    data = numpy.ascontiguousarray(data).reshape(-1).view(numpy.uint8)
    chunks = max(1, min(_MOST_CHUNKS, len(data) // _SHORTEST_CHUNK))
    chunk = len(data) // chunks // 4 * 4
    zero = numpy.zeros(chunks, dtype=numpy.uint32)
    body = data[: chunk * chunks].reshape(chunks, chunk)
    register = _fold(_advance_words(zero, body), chunk) if chunk else 0
    # The initial all-ones register moved past the body, then the remaining bytes.
    start = numpy.array([_ALL_ONES], numpy.uint32)
    register ^= int(_past_zeros(start, chunk * chunks)[0])
    tail = data[chunk * chunks :].reshape(1, -1)
    register = int(_advance_bytes(numpy.array([register], numpy.uint32), tail)[0])
    return register ^ _ALL_ONES


def masked(crc: int) -> int:
    """TensorFlow's masked form of `crc` (crc32c::Mask)."""
    rotated = ((crc >> 15) | (crc << 17)) & _ALL_ONES
    return (rotated + _MASK_DELTA) & _ALL_ONES
