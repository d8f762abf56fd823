"""
Writing a file so that it is either the old one or the complete new one, never half of either:
the new content goes to a temporary file beside it, which is renamed onto it once complete.
The one way the plugin writes files (`elmo-embed`, the checkpointer, `elmo-perplexity
--output-file`; sets of files, such as an export, through `file_sets`), with the checks that
an output can be written (`check_output_file`, before the work). It imports nothing else of
`elmo_plugin` but its error (whether an output is one of a command's inputs, however each is
named, is `package_files.refuse_overwriting`'s: names are the naming package's).

- A rewritten file keeps the mode, and as far as this user may, the owner and group of the
  file it replaces; the temporary name stays within the file system's name limit.

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
import hashlib
import logging
import os
import shutil
import stat
import tempfile
from typing import Iterator, Optional

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


def check_output_file(path: str, what: str = "output") -> None:
    """A `ConfigurationError` naming `what` (e.g. "--output-file"), `path` and the cause when
    `path` cannot be written: a URL or `elmo_plugin://` name, its directory missing (never
    made: a mistyped folder would be), not a directory or not writable, or `path` an existing
    directory, device or pipe. Commands call it before their work."""
    _refuse_remote(path, what)
    target = os.path.realpath(path)
    if os.path.exists(target) and not os.path.isfile(target):
        raise ConfigurationError(
            f"{what} {path} is not a regular file (a directory, device or pipe): replacing it "
            "would destroy it; name a file"
        )
    problem = _directory_problem(os.path.dirname(target))
    if problem is not None:
        raise ConfigurationError(f"cannot write {what} {path}: {problem}")


def check_output_directory(path: str, what: str = "output directory") -> None:
    """A `ConfigurationError` when the directory `path` (made if missing) cannot be written:
    it is a file, or its nearest existing ancestor is not a writable directory."""
    _refuse_remote(path, what)
    existing = os.path.realpath(path)
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    if existing == os.path.realpath(path) and not os.path.isdir(existing):
        raise ConfigurationError(f"{what} {path} is not a directory")
    problem = _directory_problem(existing)
    if problem is not None:
        raise ConfigurationError(f"cannot write {what} {path}: {problem}")


def _refuse_remote(path: str, what: str) -> None:
    """An output is a local path: `open("elmo_plugin://x")` writes into a folder `elmo_plugin:`."""
    if "://" in os.fspath(path):
        raise ConfigurationError(
            f"{what} {path} is a URL or a name of the package's files; an output is a local path"
        )


def _directory_problem(directory: str) -> Optional[str]:
    if not os.path.exists(directory):
        return f"the directory {directory} does not exist; create it first"
    if not os.path.isdir(directory):
        return f"{directory} is not a directory"
    if not os.access(directory, os.W_OK | os.X_OK) or not _can_create_in(directory):
        return f"the directory {directory} is not writable"
    return None


def _can_create_in(directory: str) -> bool:
    """Whether a file can be made in `directory`, tried: `os.access` says yes to root on a
    read-only file system or where the file system refuses new files (sysfs)."""
    try:
        handle, probe = tempfile.mkstemp(prefix=".elmo-plugin-probe-", dir=directory)
    except OSError:
        return False
    os.close(handle)
    os.remove(probe)
    return True


@contextlib.contextmanager
def replaced_when_complete(path: str) -> Iterator[str]:
    """Yields a temporary path in the directory of `path` (of its target, for a symlink) to
    write to; when the block ends without an exception the file gets the mode and owner of
    the file it replaces (a new one: those a plain `open` would give it), is flushed to disk
    and renamed onto `path` (`os.replace`, atomic); otherwise it is removed and `path` is
    left as it was."""
    partial = staged_partial(path)
    try:
        with naming_a_full_disk(path):
            yield partial
            commit_partial(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def staged_partial(path: str) -> str:
    """Checks `path` (`check_output_file`), removes the partial files killed writers left
    for it, and makes an empty temporary file beside its target: the path to write to."""
    check_output_file(path)
    directory, name = os.path.split(os.path.realpath(path))
    remove_stale_partials(directory, name)
    try:
        handle, partial = tempfile.mkstemp(
            prefix=f".{_partial_stem(name, directory)}.{os.getpid()}-",
            suffix=_PARTIAL_SUFFIX,
            dir=directory,
        )
    except OSError as error:
        raise ConfigurationError(f"cannot write {path}: {error.strerror} ({directory})") from error
    os.close(handle)
    return partial


def commit_partial(partial: str, path: str) -> None:
    """Gives the written `partial` the mode and owner of `path`'s target (or a new file's),
    flushes it to disk and renames it onto that target; a full disk is a `DiskFullError`."""
    target = os.path.realpath(path)
    with naming_a_full_disk(path):
        _take_mode_and_owner(partial, target)
        with open(partial, "rb") as written:
            os.fsync(written.fileno())
        os.replace(partial, target)


@contextlib.contextmanager
def naming_a_full_disk(path: str) -> Iterator[None]:
    """Turns an error of the block that came from a full disk into a `DiskFullError` naming
    `path` and its directory."""
    try:
        yield
    except DiskFullError:
        raise
    except Exception as error:
        full = _full_disk_error(error, path, os.path.dirname(os.path.realpath(path)))
        if full is None:
            raise
        raise full from error


def _take_mode_and_owner(partial: str, target: str) -> None:
    """mkstemp makes the file 0600, private whatever the umask: give it the replaced file's
    mode and owner (each as far as this user may), or a new file's mode."""
    try:
        existing = os.stat(target)
    except FileNotFoundError:
        os.chmod(partial, default_file_mode())
        return
    for owner in ((existing.st_uid, existing.st_gid), (-1, existing.st_gid)):
        try:
            os.chown(partial, *owner)
            break
        except PermissionError:
            continue
    os.chmod(partial, stat.S_IMODE(existing.st_mode))  # after chown, which clears setuid


def _partial_stem(name: str, directory: str) -> str:
    """`name`, or for a name too long to take the temporary name's 30 more bytes within the
    file system's limit, its start and a hash of the whole (the same each time, so that
    `remove_stale_partials` finds it)."""
    try:
        longest = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        longest = 255
    encoded = os.fsencode(name)
    room = longest - 32
    if len(encoded) <= room:
        return name
    digest = hashlib.sha256(encoded).hexdigest()[:12]
    return os.fsdecode(encoded[: room - len(digest) - 1]) + "~" + digest


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
    prefix = f".{_partial_stem(name, directory)}."
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
