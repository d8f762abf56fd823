"""
The little of protobuf's wire format that a checkpoint's index needs (varints, fixed32,
length-delimited fields), decoded by hand: protobuf's own package would be a dependency of the
core, and its generated classes for TensorFlow's messages another.
"""

import struct
from typing import Dict, Iterator, List, Tuple, Union

Value = Union[int, bytes]

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


class WireError(ValueError):
    """Bytes that are not what the decoder expected; the caller names the file."""


def varint(data: bytes, position: int) -> Tuple[int, int]:
    """The varint at `position` and the position after it."""
    result, shift = 0, 0
    while True:
        if position >= len(data) or shift > 63:
            raise WireError(f"a varint runs past the end at byte {position}")
        byte = data[position]
        result |= (byte & 0x7F) << shift
        position += 1
        if not byte & 0x80:
            return result, position
        shift += 7


def fields(message: bytes) -> Iterator[Tuple[int, Value]]:
    """Each (field number, value) of `message`: an int for varints and fixed widths, the bytes
    of a length-delimited field (a string, a nested message or packed numbers)."""
    position = 0
    while position < len(message):
        key, position = varint(message, position)
        number, kind = key >> 3, key & 7
        value: Value
        if kind == _VARINT:
            value, position = varint(message, position)
        elif kind == _FIXED32:
            value, position = struct.unpack_from("<I", message, position)[0], position + 4
        elif kind == _FIXED64:
            value, position = struct.unpack_from("<Q", message, position)[0], position + 8
        elif kind == _LENGTH:
            length, position = varint(message, position)
            value, position = message[position : position + length], position + length
        else:
            raise WireError(f"field {number} has wire type {kind}, which no message here uses")
        if position > len(message):
            raise WireError(f"field {number} runs past the end of its message")
        yield number, value


def parse(message: bytes) -> Dict[int, List[Value]]:
    """Every field of `message`, by number, values in their order."""
    parsed: Dict[int, List[Value]] = {}
    for number, value in fields(message):
        parsed.setdefault(number, []).append(value)
    return parsed


def signed(value: int) -> int:
    """A varint's int64 (two's complement over 64 bits)."""
    return value - (1 << 64) if value >= 1 << 63 else value
