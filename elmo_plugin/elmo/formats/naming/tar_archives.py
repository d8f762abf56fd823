"""
TF-Hub's compressed modules (`.tar.gz`, as tfhub.dev and Kaggle serve `google/elmo`), unpacked
once into the download cache and read from there as a module folder: a gzip stream cannot be
read in place the way a ZIP member is (`zip_archives`), and TF-Hub caches its modules unpacked
too. The archive is left as it was. Only plain files and folders inside the archive's own tree
are unpacked: an absolute path, a `..`, a link or a device is refused, naming it.
"""

import hashlib
import os
import shutil
import tarfile
import tempfile
from typing import List

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import CACHE_DIRECTORY

TAR_SUFFIXES = (".tar.gz", ".tgz")
_UNPACKED_DIRECTORY = os.path.join(CACHE_DIRECTORY, "elmo_plugin_tar")
_COMPLETE = ".unpacked"  # written last: a folder without it was cut short


def is_tar_archive(name: str) -> bool:
    """Whether `name` is a local `.tar.gz` (or `.tgz`) file."""
    return "://" not in name and name.lower().endswith(TAR_SUFFIXES) and os.path.isfile(name)


def unpacked(archive: str) -> str:
    """The folder `archive` unpacks to in the cache, unpacked now unless it already was (the
    folder is named by the archive's path, size and modification time)."""
    stat = os.stat(archive)
    key = f"{os.path.realpath(archive)}\0{stat.st_size}\0{stat.st_mtime_ns}"
    name = os.path.basename(archive).split(".")[0] or "archive"
    target = os.path.join(
        _UNPACKED_DIRECTORY, f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    )
    if not os.path.exists(os.path.join(target, _COMPLETE)):
        _unpack(archive, target)
    return target


def _unpack(archive: str, target: str) -> None:
    os.makedirs(_UNPACKED_DIRECTORY, exist_ok=True)
    partial = tempfile.mkdtemp(dir=_UNPACKED_DIRECTORY, prefix=".partial-")
    try:
        with tarfile.open(archive, "r:*") as opened:
            members = opened.getmembers()
            _refuse_unsafe(archive, members)
            for member in members:
                destination = os.path.join(partial, *member.name.split("/"))
                if member.isdir():
                    os.makedirs(destination, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(destination), exist_ok=True)
                source = opened.extractfile(member)
                assert source is not None  # a regular file (`_refuse_unsafe`)
                with source, open(destination, "wb") as handle:
                    shutil.copyfileobj(source, handle)
        open(os.path.join(partial, _COMPLETE), "w").close()
        shutil.rmtree(target, ignore_errors=True)  # one cut short before
        os.rename(partial, target)
    except (tarfile.TarError, EOFError, OSError) as error:
        raise ConfigurationError(
            f"{archive}: not a readable .tar.gz archive ({error}); is it truncated?"
        ) from error
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _refuse_unsafe(archive: str, members: List[tarfile.TarInfo]) -> None:
    for member in members:
        parts = member.name.split("/")
        if member.name.startswith("/") or ".." in parts:
            raise ConfigurationError(
                f"{archive}: the member {member.name!r} would be written outside the folder "
                "it unpacks to; refused"
            )
        if not (member.isfile() or member.isdir()):
            raise ConfigurationError(
                f"{archive}: the member {member.name!r} is a link or a special file; a module "
                "archive holds plain files and folders only"
            )
