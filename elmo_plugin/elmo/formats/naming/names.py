"""
How a user names a biLM, resolved in one place for every entry point (`ElmoEmbedder`,
`elmo-embed`, `load_bilm` and so the `elmo` embedder and `Elmo`, `elmo-perplexity`):

- a published biLM's short name (`"original"`, `"small"`, ...: `PUBLISHED_MODELS`; a
  published ZIP's, `"efml-de"`, ...: `PUBLISHED_ARCHIVES`, downloaded when named);
- `elmo_plugin://...`, a file or folder inside the installed package (the shipped biLM is
  `elmo_plugin://pretrained/elmo_wikipedia_512x128`);
- a folder holding a biLM in a format of `BILM_FOLDER_FORMATS` (an `elmo-export`, an
  ELMoForManyLangs model, an unpacked NLPL archive, a bilm-tf training checkpoint folder, a
  TF1 Hub module);
- one checkpoint of such a folder, by its prefix (`.../model.ckpt-N`);
- a `.tar.gz` holding such a folder (TF-Hub's compressed modules), unpacked once into the cache;
- a ZIP archive holding such a folder at its top or as its one biLM sub-folder (NLPL's
  repository publishes bilm-tf and ELMoForManyLangs models so), read in place: its files are
  named `<archive>/<member>` (`zip_archives`);
- the bilm-tf pair, `options.json` and `weights.hdf5`, as paths or URLs.

Every name becomes a path (or a URL) here, normalised, before anything checks or compares it:
`package_files.local_path` is what the commands compare their outputs against.
"""

import os
import zipfile
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union

from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.files.zip_archives import (
    folders_inside,
    is_file,
    is_folder,
    list_folder,
    split_member,
)
from elmo_plugin.elmo.formats.naming.bilm_formats import (
    BILM_FOLDER_FORMATS,
    BILM_TF,
    OPTIONS_NAME,
    TF_CHECKPOINT,
    WEIGHTS_NAME,
    WHOLE_FOLDER_FORMATS,
    is_checkpoint_prefix,
)
from elmo_plugin.elmo.formats.naming.package_files import (
    SCHEME,
    SHIPPED_BILM,
    local_file,
    no_such_path,
    package_path,
)
from elmo_plugin.elmo.formats.naming.published_models import (
    PREFIX,
    PUBLISHED_ARCHIVES,
    PUBLISHED_MODELS,
    published_archive,
    short_names,
)
from elmo_plugin.elmo.formats.naming.tar_archives import is_tar_archive, unpacked

PathName = Union[str, "os.PathLike[str]"]
SHIPPED_OPTIONS = f"{SHIPPED_BILM}/{OPTIONS_NAME}"
SHIPPED_WEIGHTS = f"{SHIPPED_BILM}/{WEIGHTS_NAME}"
ZIP_SUFFIX = ".zip"


@dataclass(frozen=True)
class BilmFiles:
    """A biLM's files: for `BILM_TF` its options and weights, each a local path, a URL or
    `elmo_plugin://...`; for another format its folder (`options_file`) alone. (Not a tuple,
    so that it is never spread into `load_bilm`'s positional parameters by mistake.)"""

    options_file: str
    weight_file: Optional[str]
    format: str = BILM_TF


def resolve_bilm(
    options_file: PathName, weight_file: Optional[PathName] = None, what: str = "options_file"
) -> BilmFiles:
    """
    The bilm-tf files that `options_file` (and `weight_file`) name: a short name, a folder
    (`elmo_plugin://...` or a path) or the options file itself. A whole biLM brings its own
    weights, so `weight_file` must then be left out; an options file needs its `weight_file`
    (the shipped biLM's options alone mean the shipped biLM). `what` names the argument in
    errors.
    """
    name = _text(options_file, what)
    weights = None if weight_file is None else _text(weight_file, "weight_file")
    _refuse_missing_zip(name, what)
    folder = _folder(name)
    if folder is not None:
        if weights is not None:
            raise ConfigurationError(
                f"{what} {name!r} names a whole biLM, which brings its own weights; leave out "
                f"weight_file (got {weights!r})"
            )
        return _folder_files(name, folder)
    if weights is None and name == SHIPPED_OPTIONS:
        return BilmFiles(name, SHIPPED_WEIGHTS)
    if weights is None and is_checkpoint_prefix(name):
        return BilmFiles(name, None, TF_CHECKPOINT)
    _refuse_unknown_short_name(name, what)
    return BilmFiles(name, weights)


def require_weights(files: BilmFiles, what: str = "options_file") -> BilmFiles:
    """`files`, refused when they have no weights: a biLM of random weights is never wanted
    outside a model (whose archive may bring them). A local file that is not there is said to
    be missing, not taken for an options file without weights."""
    for name in (files.options_file, files.weight_file):
        # A ZIP's missing member is named by the reader, with what the ZIP holds.
        if (
            name is not None
            and is_gone(name)
            and split_member(name) is None
            and not is_checkpoint_prefix(name)  # its files are `name.index` and `name.data-*`
        ):
            raise no_such_path(
                name,
                what,
                "name a biLM folder or ZIP, an options.json with its weights.hdf5, or a "
                f"published biLM by name ({', '.join(PUBLISHED_MODELS)}, efml-<language>)",
            )
    if files.weight_file is None and files.format == BILM_TF:
        raise ConfigurationError(
            f"{what} {files.options_file!r} needs its weight_file (bilm-tf {WEIGHTS_NAME}): "
            "without it the biLM's weights would be random. Name both files, a folder holding "
            f"both, or a published biLM by name ({short_names()})"
        )
    return files


def is_gone(name: str) -> bool:
    """Whether the local path `name` (a ZIP member too) is neither a file nor a folder."""
    return "://" not in name and not is_folder(name) and not is_file(name)


def files_read(files: BilmFiles, what: str) -> Dict[str, Optional[str]]:
    """The files the biLM of `files` is read from, each by what names it (`what`'s options or
    weights, or each file of a folder format's folder), for a command's outputs to be checked
    against."""
    if files.weight_file is not None:
        return {f"{what}'s options": files.options_file, f"{what}'s weights": files.weight_file}
    folder = files.options_file
    return {f"{what}'s {name}": os.path.join(folder, name) for name in list_folder(folder)}


def _text(name: PathName, what: str) -> str:
    if not isinstance(name, (str, os.PathLike)):
        raise ConfigurationError(
            f"{what} must be a path or a name (str or os.PathLike), got the "
            f"{type(name).__name__} {name!r}"
        )
    text = os.fspath(name)
    if not isinstance(text, str):
        raise ConfigurationError(f"{what} must name a path as text, got bytes {text!r}")
    return text if text.startswith(SCHEME) or "://" in text else os.path.expanduser(text)


def _folder(name: str) -> Optional[str]:
    """The local folder that `name` stands for (a short name's is a published one), or None
    when it names a file."""
    if name in PUBLISHED_MODELS:
        return f"{SCHEME}{PREFIX}{name}"
    in_package = name[len(SCHEME) :] if name.startswith(SCHEME) else ""
    archive = published_archive(PREFIX + name if name in PUBLISHED_ARCHIVES else in_package)
    if archive is not None:
        # A published ZIP (ELMoForManyLangs'): downloaded now, then read in place as a folder.
        return local_file(SCHEME + archive, "published biLM")
    if name.startswith(SCHEME + PREFIX):
        return name if name[len(SCHEME + PREFIX) :].strip("/").count("/") == 0 else None
    if is_tar_archive(name):  # TF-Hub's compressed modules
        return unpacked(name)
    local = package_path(name[len(SCHEME) :]) if name.startswith(SCHEME) else name
    return local if "://" not in local and is_folder(local) else None


def _folder_files(name: str, folder: str) -> BilmFiles:
    if folder.startswith(SCHEME):  # a published biLM: its two files, downloaded when read
        return BilmFiles(f"{folder}/{OPTIONS_NAME}", f"{folder}/{WEIGHTS_NAME}")
    # The files are looked for in `local` and named from `name` (`elmo_plugin://...` stays so).
    local, base = folder.rstrip("/"), name.rstrip("/")
    if is_tar_archive(name):  # read from where it was unpacked
        base = local
    fmt = _format_of(local)
    if fmt is None and (split_member(local) or ("", None))[1] == "":  # a ZIP's one biLM folder
        local, fmt = _zip_sub_folder(local)
        base = local
    if fmt is None:
        kind = "ZIP archive" if split_member(local) else "folder"
        raise ConfigurationError(
            f"the {kind} {name!r} holds no biLM: it has {_listed(list_folder(local))}; a biLM "
            f"{kind} holds {_needs()}"
        )
    if fmt in WHOLE_FOLDER_FORMATS:
        return BilmFiles(local, None, fmt)
    options, weights = BILM_FOLDER_FORMATS[fmt]
    return BilmFiles(f"{base}/{options}", f"{base}/{weights}", fmt)


def _format_of(folder: str) -> Optional[str]:
    """The format of the biLM in `folder` (`BILM_FOLDER_FORMATS`), or None."""
    for fmt, needs in BILM_FOLDER_FORMATS.items():
        if all(is_file(f"{folder}/{file_name}") for file_name in needs):
            return fmt
    return None


def _zip_sub_folder(archive: str) -> Tuple[str, Optional[str]]:
    """The one folder inside `archive` that holds a biLM, with its format, or `(archive, None)`
    when none does; several are an error naming them."""
    found = [(sub, _format_of(sub)) for sub in folders_inside(archive)]
    found = [(sub, fmt) for sub, fmt in found if fmt is not None]
    if len(found) > 1:
        raise ConfigurationError(
            f"the ZIP archive {archive!r} holds {len(found)} biLMs, in "
            f"{_listed([sub for sub, _ in found])}; name one of these folders"
        )
    return found[0] if found else (archive, None)


def _needs() -> str:
    return "; or ".join(
        f"{' and '.join(needs)} ({fmt})" for fmt, needs in BILM_FOLDER_FORMATS.items()
    )


def _refuse_missing_zip(name: str, what: str) -> None:
    """A ZIP that is not there, or not a whole ZIP, would otherwise be taken for an options
    file without weights."""
    if not name.lower().endswith(ZIP_SUFFIX) or "://" in name:
        return
    if not os.path.exists(name):
        raise MissingFileError(
            f"{what} {name!r}: no such ZIP archive (tried {os.path.abspath(name)}); name the "
            "archive as downloaded, e.g. NLPL's 209.zip, or the folder it was unpacked into"
        )
    if os.path.isfile(name) and not zipfile.is_zipfile(name):
        raise ConfigurationError(
            f"{what} {name!r}: not a readable ZIP archive ({os.path.getsize(name)} bytes, no "
            "ZIP directory at its end); is it truncated? Download it again"
        )


def _listed(names: List[str], most: int = 8) -> str:
    if not names:
        return "no files"
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _refuse_unknown_short_name(name: str, what: str) -> None:
    """A bare word that is no file is taken for a short name the user misspelt."""
    bare = os.sep not in name and "://" not in name and "." not in name
    if bare and not os.path.exists(name):
        raise ConfigurationError(
            f"{what} {name!r} is neither a file nor a folder (relative to {os.getcwd()}) nor the "
            f"short name of a published biLM; the short names are "
            f"{short_names()}; the shipped biLM is {SHIPPED_BILM}"
        )
