"""
Reading a UTF-8 text file line by line the same way everywhere (the task readers, `elmo-embed`):
a leading UTF-8 BOM dropped; `\\n`, `\\r\\n` and a lone `\\r` (old Mac files) all end a line,
as in Python's text mode; a line that is not UTF-8, or longer than `MAX_LINE_BYTES` (a
minified JSON file, a file without line ends), an error naming the file and the line, read
with bounded memory. `quoted` bounds what an error message quotes of the input;
`lone_surrogate` finds text that JSON allows and UTF-8 cannot encode. It imports only the
core's errors and downloads.
"""

import io
import os
from typing import Any, Iterator, Optional

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import fetch, no_such_path

_BOM = "\ufeff"
# No sentence, CoNLL row or JSON line of a task is near this long.
MAX_LINE_BYTES = 1 << 20
MAX_QUOTED = 200


def text_lines(file_path: str) -> Iterator[str]:
    """The lines of the UTF-8 text file `file_path` (a URL or a local path), each ending in
    "\\n" (but perhaps the last), without a leading BOM; a line that is not UTF-8 or is over
    `MAX_LINE_BYTES` is a `ConfigurationError` naming file and line."""
    limit = MAX_LINE_BYTES
    local = fetch(file_path, "text file") if "://" in str(file_path) else file_path
    check_text_file(local)
    with open(local, "rb") as raw:
        # latin-1 maps bytes to characters one to one, and no byte of a multi-byte UTF-8
        # character is "\r" or "\n": its universal newlines split the bytes where UTF-8
        # text has its line ends, and readline(limit) bounds each read.
        handle = io.TextIOWrapper(raw, encoding="latin-1", newline=None)
        line_number = 0
        while True:
            piece = handle.readline(limit + 1)
            if not piece:
                return
            line_number += 1
            if len(piece) > limit:
                raise ConfigurationError(
                    f"{file_path}, line {line_number}: longer than {limit} bytes, starting "
                    f"{quoted(_start(piece))}; expected lines of text (is it the right file?)"
                )
            line = _utf8(piece.encode("latin-1"), file_path, line_number)
            yield line[1:] if line_number == 1 and line.startswith(_BOM) else line


def check_text_file(file_path: str, what: str = "text file") -> None:
    """A `ConfigurationError` naming `what` when the local `file_path` is missing, a folder or
    not readable (a pipe, such as `/dev/stdin`, is read); a URL is checked when downloaded."""
    if "://" in str(file_path):
        return
    path = os.path.expanduser(file_path)
    if not os.path.exists(path):
        raise no_such_path(file_path, what, "name a UTF-8 text file")
    if os.path.isdir(path):
        raise ConfigurationError(f"{what} {file_path} is a folder; name a UTF-8 text file")
    if not os.access(path, os.R_OK):
        raise ConfigurationError(f"{what} {file_path} is not readable (its permissions)")


def _start(piece: str) -> str:
    return piece[:MAX_QUOTED].encode("latin-1").decode("utf-8", "replace")


def _utf8(raw: bytes, file_path: str, line_number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigurationError(
            f"{file_path}, line {line_number}: not UTF-8 ({error.reason} at byte "
            f"{error.start} of the line); expected UTF-8 text"
        ) from error


def lone_surrogate(text: str) -> Optional[str]:
    """What is wrong with `text` when it holds a lone surrogate (JSON's `"\\ud800"` decodes to
    one; it is not Unicode text and UTF-8 cannot encode it), else None."""
    bad = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
    if bad is None:
        return None
    return (
        f"holds a lone surrogate {ascii(bad)[1:-1]} at character {text.index(bad)}; "
        "expected valid Unicode text"
    )


def quoted(value: Any) -> str:
    """`repr(value)`, cut to `MAX_QUOTED` characters."""
    text = repr(value)
    return text if len(text) <= MAX_QUOTED else text[:MAX_QUOTED] + "..."
