"""
ZIP archives read in place, as NLPL's repository (vectors.nlpl.eu) publishes ELMo models: a ZIP
file stands for the folder it holds, and `<archive>/<member>` names a file or folder inside it
(the notation of Python's `zipimport`, e.g. `209.zip/options.json`), so that a biLM in a ZIP is
named, recognised and read as a folder is (`names`, `bilm_tf`, `efml.directory`). Nothing is
unpacked to disk: a member is read whole into memory, which h5py and `torch.load` take as a file
object (an archive's members are compressed, and a compressed stream cannot seek cheaply).

A ZIP may come from anyone, and a member declaring gigabytes can be a few megabytes of
compressed zeros (a "ZIP bomb"): each member's declared size is checked before it is read
(`check_member_size`; Python's `zipfile` never returns more than it). An archive's listing is read
once and kept while the file is unchanged, so that looking through many folders stays linear.
"""

import functools
import io
import os
import zipfile
import zlib
from typing import BinaryIO, FrozenSet, List, Optional, Set, Tuple

from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError

# Weights compress to about their size, tables and JSON a few times; deflate reaches about 1000
# only on repeated bytes. Members below `SMALL_MEMBER` bytes are not held to the ratio.
MAX_COMPRESSION_RATIO = 100
SMALL_MEMBER = 16 * 2**20


def split_member(path: str) -> Optional[Tuple[str, str]]:
    """`(archive, member)` when the local `path` is a ZIP file (`member` is then `""`) or runs
    through one; None for any other path and for a URL. `member` is in the ZIP's own
    notation (`/`-separated), whether or not the archive holds it."""
    if "://" in path:
        return None
    head, parts = os.path.normpath(os.path.expanduser(path)), []
    while not os.path.exists(head):
        head, part = os.path.split(head)
        if not part:
            return None
        parts.append(part)
    if not os.path.isfile(head) or not zipfile.is_zipfile(head):
        return None
    return head, "/".join(reversed(parts))


def outer_file(name: str) -> str:
    """The file on disk that `name` is read from: the archive of a ZIP member, else `name`."""
    inside = split_member(name)
    return name if inside is None else inside[0]


def is_folder(path: str) -> bool:
    """Whether `path` is a folder: on disk, a ZIP file (its top folder) or a folder inside one."""
    if os.path.isdir(path):
        return True
    inside = split_member(path)
    return inside is not None and (inside[1] == "" or inside[1] in _folders(inside[0]))


def is_file(path: str) -> bool:
    """Whether `path` is a file on disk (a ZIP file too: torch's `.pkl` files are ZIPs) or in
    a ZIP."""
    if os.path.isfile(path):
        return True
    inside = split_member(path)
    return inside is not None and inside[1] in _file_names(inside[0])


def list_folder(path: str) -> List[str]:
    """The names in the folder `path` (`is_folder`), on disk or in a ZIP."""
    inside = split_member(path)
    if inside is None:
        return os.listdir(path)
    archive, member = inside
    prefix = member.rstrip("/") + "/" if member else ""
    entries = _file_names(archive) | _folders(archive)
    return sorted(
        {
            name[len(prefix) :].split("/")[0]
            for name in entries
            if name.startswith(prefix) and len(name) > len(prefix)
        }
    )


def folders_inside(archive: str) -> List[str]:
    """Every folder inside the ZIP file `archive`, each named `<archive>/<folder>`."""
    return [f"{archive}/{folder}" for folder in sorted(_folders(archive))]


def file_size(path: str) -> int:
    """The bytes of the file `path`, on disk or (as declared) in a ZIP."""
    inside = split_member(path)
    if inside is None or inside[1] == "":
        return os.path.getsize(path)
    with zipfile.ZipFile(inside[0]) as opened:
        return opened.getinfo(inside[1]).file_size


def open_file(path: str) -> BinaryIO:
    """The file `path` opened for reading bytes: a ZIP member's bytes in memory, else the
    file on disk."""
    inside = split_member(path)
    if inside is None or inside[1] == "":
        return open(path, "rb")
    return _read_member(*inside)


def member_bytes(name: str, what: str) -> Optional[BinaryIO]:
    """The bytes of the ZIP member `name` in memory (a `MissingFileError` naming `what` and what
    the ZIP holds when it holds no such member), or None when `name` runs through no ZIP."""
    inside = split_member(name)
    if inside is None or inside[1] == "":
        return None
    if inside[1] not in _file_names(inside[0]):
        raise MissingFileError(
            f"{what} {name!r} not found: the ZIP archive {inside[0]} holds no {inside[1]!r} "
            f"(its top folder has {', '.join(list_folder(inside[0])[:8]) or 'nothing'})"
        )
    return _read_member(*inside)


def check_member_size(archive: str, info: zipfile.ZipInfo) -> None:
    """A `ConfigurationError` naming the member `info` of `archive` when its declared size is
    out of proportion to its compressed size (`MAX_COMPRESSION_RATIO`) or beyond the memory
    available to read it into."""
    name = f"{archive}/{info.filename}"
    declared, compressed = info.file_size, info.compress_size
    if declared > SMALL_MEMBER and declared > MAX_COMPRESSION_RATIO * max(compressed, 1):
        raise ConfigurationError(
            f"{name}: declares {declared} bytes from {compressed} compressed, expected at most "
            f"{MAX_COMPRESSION_RATIO} times as many; refusing to read it (a ZIP bomb?)"
        )
    available = available_memory()
    if available is not None and declared > available:
        raise ConfigurationError(
            f"{name}: declares {declared} bytes, more than the {available} bytes of memory "
            "available to read it into; unpack the archive and name the folder"
        )


def available_memory() -> Optional[int]:
    """The bytes of memory the system can give without swapping (Linux's MemAvailable), or its
    free pages elsewhere; None where neither is known."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _read_member(archive: str, member: str) -> BinaryIO:
    try:
        with zipfile.ZipFile(archive) as opened:
            info = opened.getinfo(member)
            check_member_size(archive, info)
            return io.BytesIO(opened.read(info))
    except KeyError as error:
        raise MissingFileError(
            f"{archive}/{member}: the ZIP archive holds no {member!r}"
        ) from error
    except (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        RuntimeError,
        OSError,
        NotImplementedError,
    ) as error:
        raise ConfigurationError(
            f"{archive}/{member}: cannot be read from the ZIP archive ({error}); is the archive "
            "truncated or corrupt? (zipfile -T or unzip -t tests it)"
        ) from error


def _file_names(archive: str) -> FrozenSet[str]:
    return _listing(archive)[0]


def _folders(archive: str) -> FrozenSet[str]:
    """The folders of `archive`: those it lists (`sub/`) and those its files imply."""
    return _listing(archive)[1]


def _listing(archive: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The files and folders of `archive`, read once for each state of the file."""
    try:
        status = os.stat(archive)
    except OSError as error:
        raise ConfigurationError(f"{archive}: not a readable ZIP archive ({error})") from error
    return _listing_of(os.path.abspath(archive), status.st_mtime_ns, status.st_size, status.st_ino)


@functools.lru_cache(maxsize=8)
def _listing_of(
    archive: str, mtime_ns: int, size: int, inode: int
) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    names = _names(archive)
    folders: Set[str] = set()
    for name in names:
        parts = name.split("/")[:-1]
        folders.update("/".join(parts[: end + 1]) for end in range(len(parts)))
    return frozenset(name for name in names if not name.endswith("/")), frozenset(folders)


def _names(archive: str) -> List[str]:
    try:
        with zipfile.ZipFile(archive) as opened:
            return opened.namelist()
    except (zipfile.BadZipFile, OSError) as error:
        raise ConfigurationError(f"{archive}: not a readable ZIP archive ({error})") from error
