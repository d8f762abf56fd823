"""
Reading a UTF-8 text file line by line the same way everywhere (the task readers, `elmo-embed`):
a leading UTF-8 BOM dropped, a line that is not UTF-8 an error naming the file and the line.
It imports nothing else of `elmo_plugin`.
"""

from typing import Iterator

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path

_BOM = "\ufeff"


def text_lines(file_path: str) -> Iterator[str]:
    """The lines of the UTF-8 text file `file_path` (a URL or a local path), without a
    leading BOM; a line that is not UTF-8 is a `ConfigurationError` naming file and line."""
    with open(cached_path(file_path), "rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ConfigurationError(
                    f"{file_path}, line {line_number}: not UTF-8 ({error.reason} at byte "
                    f"{error.start} of the line); expected UTF-8 text"
                ) from error
            yield line[1:] if line_number == 1 and line.startswith(_BOM) else line
