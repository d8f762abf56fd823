"""
ZIP archives read in place, as NLPL's repository (vectors.nlpl.eu) publishes ELMo models: a ZIP
file stands for the folder it holds, and `<archive>/<member>` names a file or folder inside it
(the notation of Python's `zipimport`, e.g. `209.zip/options.json`), so that a biLM in a ZIP is
named, recognised and read as a folder is (`names`, `bilm_tf`, `efml.directory`). Nothing is
unpacked to disk: a member is read whole into memory, which h5py and `torch.load` take as a file
object (an archive's members are compressed, and a compressed stream cannot seek cheaply).
"""

import io
import os
import zipfile
import zlib
from typing import BinaryIO, List, Optional, Set, Tuple, Union

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.package_files import MissingFileError, local_file


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


def open_file(path: str) -> BinaryIO:
    """The file `path` opened for reading bytes: a ZIP member's bytes in memory, else the
    file on disk."""
    inside = split_member(path)
    if inside is None or inside[1] == "":
        return open(path, "rb")
    return _read_member(*inside)


def local_source(name: str, what: str) -> Union[str, BinaryIO]:
    """What to read the file `name` from: a ZIP member's bytes in memory, else its local path
    (`package_files.local_file`, which also downloads a URL), checked to exist."""
    inside = split_member(name)
    if inside is None or inside[1] == "":
        return local_file(name, what)
    if inside[1] not in _file_names(inside[0]):
        raise MissingFileError(
            f"{what} {name!r} not found: the ZIP archive {inside[0]} holds no {inside[1]!r} "
            f"(its top folder has {', '.join(list_folder(inside[0])[:8]) or 'nothing'})"
        )
    return _read_member(*inside)


def _read_member(archive: str, member: str) -> BinaryIO:
    try:
        with zipfile.ZipFile(archive) as opened:
            return io.BytesIO(opened.read(member))
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


def _file_names(archive: str) -> Set[str]:
    return {name for name in _names(archive) if not name.endswith("/")}


def _folders(archive: str) -> Set[str]:
    """The folders of `archive`: those it lists (`sub/`) and those its files imply."""
    folders: Set[str] = set()
    for name in _names(archive):
        parts = name.split("/")[:-1]
        folders.update("/".join(parts[: end + 1]) for end in range(len(parts)))
    return folders


def _names(archive: str) -> List[str]:
    try:
        with zipfile.ZipFile(archive) as opened:
            return opened.namelist()
    except (zipfile.BadZipFile, OSError) as error:
        raise ConfigurationError(f"{archive}: not a readable ZIP archive ({error})") from error
