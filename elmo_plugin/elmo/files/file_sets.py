"""
Files that belong together, replaced as one: an export's `options.json`, `weights.hdf5` and,
with its softmax, `softmax.hdf5` and `vocab.txt`. A reader never takes the new weights with
the old softmax.

- Writing (`replaced_together`): every new file goes to a temporary name beside its own
  (`atomic_files`); a failure, a kill or Ctrl-C while they are written leaves the old set as
  it was. Once all are written, under an exclusive lock on the directory (`flock`) and with
  SIGINT and SIGTERM held back, each is renamed onto its name and `manifest.json`, listing the
  size and SHA-256 of each file of the set, is written last. Two writers at once commit one
  after the other: the set is the last one's, whole.
- Reading (`read_together`): under a shared lock on the directory, so no commit runs
  meanwhile, each file read is checked against the manifest. A file the manifest does not
  list (left by an earlier export with more files) or that differs from it (a `kill -9` in
  the microseconds between two renames, or a file changed by hand) is a
  `ConfigurationError` naming the file and the fix; it is never read silently. A directory
  without a manifest (the shipped model, one made by other tools) is read as it is.

Locks are advisory and `flock` may be unsupported (some network file systems): the manifest
check still holds there.
"""

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import threading
from typing import Dict, Iterator, List, Sequence

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import (
    commit_partial,
    replaced_when_complete,
    staged_partial,
)

MANIFEST_NAME = "manifest.json"
_CHUNK = 1 << 20


@contextlib.contextmanager
def replaced_together(directory: str, names: Sequence[str]) -> Iterator[Dict[str, str]]:
    """Yields a temporary path for each file name in `names` (a dict, name to path) to write
    to; when the block ends without an exception all are renamed onto `directory/<name>` at
    once, under the lock, and the manifest of exactly these files is written last."""
    partials: Dict[str, str] = {}
    try:
        for name in names:
            partials[name] = staged_partial(os.path.join(directory, name))
        yield partials
        manifest = {name: fingerprint(partial) for name, partial in partials.items()}
        with _directory_locked(directory, fcntl.LOCK_EX), _signals_held():
            for name, partial in partials.items():
                commit_partial(partial, os.path.join(directory, name))
            _write_manifest(directory, manifest)
    finally:
        for partial in partials.values():
            if os.path.exists(partial):
                os.remove(partial)


@contextlib.contextmanager
def read_together(paths: Sequence[str]) -> Iterator[None]:
    """Holds a shared lock on the directory of each of `paths` while the block reads them,
    after checking each against its directory's manifest, if it has one. Paths that are not
    local files (URLs, `elmo_plugin://` names) are left to their readers."""
    local = [path for path in paths if "://" not in path and os.path.isfile(path)]
    directories = sorted({os.path.dirname(os.path.realpath(path)) for path in local})
    with contextlib.ExitStack() as locks:
        for directory in directories:
            locks.enter_context(_directory_locked(directory, fcntl.LOCK_SH))
        for path in local:
            _check_against_manifest(path)
        yield


def _check_against_manifest(path: str) -> None:
    directory, name = os.path.split(os.path.realpath(path))
    manifest_file = os.path.join(directory, MANIFEST_NAME)
    if not os.path.exists(manifest_file):
        return
    listed = _read_manifest(manifest_file)
    keep = f"export again, or delete {manifest_file} to read the files as they are"
    if name not in listed:
        raise ConfigurationError(
            f"{path} is not one of the files written with the others in {directory} "
            f"({MANIFEST_NAME} lists {', '.join(sorted(listed))}): it is left from an earlier "
            f"export; {keep}"
        )
    if fingerprint(path) != listed[name]:
        raise ConfigurationError(
            f"{path} is not the file written with the others in {directory} (its size or "
            f"SHA-256 differs from {MANIFEST_NAME}'s): the export was interrupted while its "
            f"files were renamed, or the file was changed since; {keep}"
        )


def fingerprint(path: str) -> Dict[str, object]:
    """`{"bytes": size, "sha256": hex digest}` of the file `path`, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return {"bytes": os.path.getsize(path), "sha256": digest.hexdigest()}


def _write_manifest(directory: str, files: Dict[str, Dict[str, object]]) -> None:
    with replaced_when_complete(os.path.join(directory, MANIFEST_NAME)) as partial:
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump({"files": files}, handle, indent=2, sort_keys=True)
            handle.write("\n")


def _read_manifest(manifest_file: str) -> Dict[str, Dict[str, object]]:
    try:
        with open(manifest_file, encoding="utf-8") as handle:
            files = json.load(handle)["files"]
        if isinstance(files, dict):
            return files
    except (OSError, ValueError, KeyError, TypeError):
        pass
    raise ConfigurationError(
        f"{manifest_file} is not a manifest of the files beside it (an object with 'files'); "
        "export again, or delete it to read the files as they are"
    )


@contextlib.contextmanager
def _directory_locked(directory: str, operation: int) -> Iterator[None]:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(descriptor, operation)
        yield
    finally:
        os.close(descriptor)  # releases the lock


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends (then arrive as usual): a Ctrl-C cannot
    stop the renames half way. Python runs signal handlers in the main thread whichever thread
    the kernel delivers to, so the handlers are swapped there (a signal mask on one thread
    does not hold a signal that another thread, torch's or gloo's, receives)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers can only be set, and only run, in the main thread
        return
    received: List[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {
        signum: signal.signal(signum, lambda got, _: received.append(got)) for signum in held
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for number in received:
            signal.raise_signal(number)
