"""
Writing a file so that it is either the old one or the complete new one, never half of either:
the new content goes to a temporary file beside it, which is renamed onto it once complete.
Used by `elmo-embed` and by the checkpointer; it imports nothing else of `elmo_plugin`.
"""

import contextlib
import os
import tempfile
from typing import Iterator


def default_file_mode() -> int:
    """The mode `open(path, "w")` gives a new file: 0o666 less the process's umask."""
    umask = os.umask(0)  # the only portable way to read it is to set it
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def replaced_when_complete(path: str) -> Iterator[str]:
    """Yields a temporary path in `path`'s directory to write to; when the block ends without
    an exception the file gets the mode a plain `open` would have given it, is flushed to disk
    and renamed onto `path` (`os.replace`, atomic); otherwise it is removed and `path` is left
    as it was."""
    directory, name = os.path.split(os.path.abspath(path))
    handle, partial = tempfile.mkstemp(prefix=f".{name}.", suffix=".partial", dir=directory)
    os.close(handle)
    try:
        yield partial
        # mkstemp makes the file 0600, private whatever the umask.
        os.chmod(partial, default_file_mode())
        with open(partial, "rb") as written:
            os.fsync(written.fileno())
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
