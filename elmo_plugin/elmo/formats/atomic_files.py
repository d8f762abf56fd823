"""
Writing a file so that it is either the old one or the complete new one, never half of either:
the new content goes to a temporary file beside it, which is renamed onto it once complete.
The one way the plugin writes files (`save_bilm`, `write_softmax`, `elmo-embed`, the
checkpointer, `elmo-perplexity --output-file`), with the check that an output is none of a
command's inputs. It imports nothing else of `elmo_plugin`.

- A failure, a kill or Ctrl-C (`KeyboardInterrupt`) while writing leaves the old file as it
  was. The temporary file is removed on any exception; one left by a process killed with -9
  is `.<name>.<pid>-<random>.partial`, and the next write of the same file removes it once
  process `<pid>` no longer runs (on this machine: a directory shared with other machines may
  hold another machine's live writes, which are left alone only when their pid runs here).
- An output that is a symbolic link is written through: its target is replaced and the link
  kept, as `open(path, "w")` would (a dangling link creates its target).
- A full disk is an `OSError` (ENOSPC) naming the file and its directory; nothing is replaced.
- An output that exists and is not a regular file (`/dev/null`, a pipe, a directory) is
  refused: renaming onto it would replace the device or pipe itself.
"""

import contextlib
import errno
import logging
import os
import shutil
import tempfile
from typing import Iterator, Mapping, Optional

from elmo_plugin.elmo.errors import ConfigurationError

logger = logging.getLogger(__name__)

_PARTIAL_SUFFIX = ".partial"
# A disk with less free space than this after a failed write is taken to be full.
_NEARLY_FULL_BYTES = 1 << 20


def default_file_mode() -> int:
    """The mode `open(path, "w")` gives a new file: 0o666 less the process's umask."""
    umask = os.umask(0)  # the only portable way to read it is to set it
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def replaced_when_complete(path: str) -> Iterator[str]:
    """Yields a temporary path in the directory of `path` (of its target, for a symlink) to
    write to; when the block ends without an exception the file gets the mode a plain `open`
    would have given it, is flushed to disk and renamed onto `path` (`os.replace`, atomic);
    otherwise it is removed and `path` is left as it was."""
    target = os.path.realpath(path)
    if os.path.exists(target) and not os.path.isfile(target):
        raise ConfigurationError(
            f"output {path} is not a regular file (a directory, device or pipe): replacing it "
            "would destroy it; name a file"
        )
    directory, name = os.path.split(target)
    remove_stale_partials(directory, name)
    try:
        handle, partial = tempfile.mkstemp(
            prefix=f".{name}.{os.getpid()}-", suffix=_PARTIAL_SUFFIX, dir=directory
        )
    except OSError as error:
        raise ConfigurationError(f"cannot write {path}: {error.strerror} ({directory})") from error
    os.close(handle)
    try:
        yield partial
        # mkstemp makes the file 0600, private whatever the umask.
        os.chmod(partial, default_file_mode())
        with open(partial, "rb") as written:
            os.fsync(written.fileno())
        os.replace(partial, target)
    except DiskFullError:
        raise
    except Exception as error:
        full = _full_disk_error(error, path, directory)
        if full is None:
            raise
        raise full from error
    finally:
        if os.path.exists(partial):
            os.remove(partial)


class DiskFullError(OSError):
    """No space left (ENOSPC) on the disk of a file being written, naming both."""

    def __init__(self, path: str, directory: str, free: int, detail: str) -> None:
        super().__init__(
            errno.ENOSPC,
            f"no space left on the disk holding {directory} ({free} bytes free) while writing "
            f"{path}; nothing was replaced ({detail[:200]})",
        )


def require_space(path: str, size: int) -> None:
    """A `DiskFullError` unless the disk of `path` has `size` bytes free and 1 MiB more: for
    writers that cannot fail cleanly on a full disk (HDF5 fails its cache flushes, floods
    stderr and may crash at exit), to call before each write. Quotas are not seen."""
    directory = os.path.dirname(os.path.realpath(path))
    free = shutil.disk_usage(directory).free
    if free < size + _NEARLY_FULL_BYTES:
        raise DiskFullError(path, directory, free, f"{size} more bytes to write")


def _full_disk_error(error: Exception, path: str, directory: str) -> Optional[OSError]:
    """A `DiskFullError` for `path` when `error` came from a full disk (an ENOSPC `OSError`,
    or another library's error on a disk found full), else None."""
    if isinstance(error, OSError) and error.errno not in (None, errno.ENOSPC):
        return None
    try:
        free = shutil.disk_usage(directory).free
    except OSError:
        return None
    said = getattr(error, "errno", None) == errno.ENOSPC or "No space left" in str(error)
    if not said and free >= _NEARLY_FULL_BYTES:
        return None
    return DiskFullError(path, directory, free, f"{type(error).__name__}: {error}")


def remove_stale_partials(directory: str, name: str) -> None:
    """Removes the temporary files `replaced_when_complete` left for `name` in `directory`
    when killed: those whose writing process no longer runs."""
    prefix = f".{name}."
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(_PARTIAL_SUFFIX)):
            continue
        pid = entry[len(prefix) :].split("-", 1)[0]
        if pid.isdigit() and not _runs(int(pid)):
            logger.info("removing %s, left by a killed process", os.path.join(directory, entry))
            with contextlib.suppress(OSError):
                os.remove(os.path.join(directory, entry))


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def refuse_overwriting(output: str, inputs: Mapping[str, Optional[str]]) -> None:
    """A `ConfigurationError` when the file `output` would be written over one of `inputs`
    (what it is, e.g. "--weight-file", to its path; None, URLs and names inside the installed
    package are skipped), compared after following symlinks, hard links included."""
    for what, path in inputs.items():
        if path is None or "://" in path:
            continue
        path = os.path.expanduser(path)
        if _same_file(output, path):
            raise ConfigurationError(
                f"output file {output} is the {what} {path}; writing it would destroy the {what}"
            )


def _same_file(output: str, path: str) -> bool:
    if os.path.exists(output) and os.path.exists(path):
        return os.path.samefile(output, path)
    return os.path.realpath(output) == os.path.realpath(path)
