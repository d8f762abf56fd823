"""
How a user names a biLM, resolved in one place for every entry point (`ElmoEmbedder`,
`elmo-embed`, `load_bilm` and so the `elmo` embedder and `Elmo`, `elmo-perplexity`):

- a published biLM's short name (`"original"`, `"small"`, ...: `PUBLISHED_MODELS`);
- `elmo_plugin://...`, a file or folder inside the installed package (the shipped biLM is
  `elmo_plugin://pretrained/elmo_wikipedia_512x128`);
- a folder holding a biLM in a format of `BILM_FOLDER_FORMATS` (an `elmo-export`, an
  ELMoForManyLangs model);
- the bilm-tf pair, `options.json` and `weights.hdf5`, as paths or URLs.

Every name becomes a path (or a URL) here, normalised, before anything checks or compares it:
`package_files.local_path` is what the commands compare their outputs against.
"""

import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.bilm_tf import OPTIONS_NAME, WEIGHTS_NAME
from elmo_plugin.elmo.formats.efml.directory import REQUIRED_FILES as EFML_FILES
from elmo_plugin.elmo.formats.package_files import (
    SCHEME,
    SHIPPED_BILM,
    package_path,
)
from elmo_plugin.elmo.formats.published_models import PREFIX, PUBLISHED_MODELS

PathName = Union[str, "os.PathLike[str]"]
SHIPPED_OPTIONS = f"{SHIPPED_BILM}/{OPTIONS_NAME}"
SHIPPED_WEIGHTS = f"{SHIPPED_BILM}/{WEIGHTS_NAME}"
BILM_TF = "bilm-tf, as elmo-export writes it"
EFML = "ELMoForManyLangs"
# What a folder must hold to be a biLM, by format: the error for any other folder lists these.
BILM_FOLDER_FORMATS: Dict[str, Tuple[str, ...]] = {
    BILM_TF: (OPTIONS_NAME, WEIGHTS_NAME),
    EFML: tuple(EFML_FILES),
}


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
    _refuse_unknown_short_name(name, what)
    return BilmFiles(name, weights)


def require_weights(files: BilmFiles, what: str = "options_file") -> BilmFiles:
    """`files`, refused when they have no weights: a biLM of random weights is never wanted
    outside a model (whose archive may bring them)."""
    if files.weight_file is None and files.format == BILM_TF:
        raise ConfigurationError(
            f"{what} {files.options_file!r} needs its weight_file (bilm-tf {WEIGHTS_NAME}): "
            "without it the biLM's weights would be random. Name both files, a folder holding "
            f"both, or a published biLM by name ({', '.join(PUBLISHED_MODELS)})"
        )
    return files


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
    if name.startswith(SCHEME + PREFIX):
        return name if name[len(SCHEME + PREFIX) :].strip("/").count("/") == 0 else None
    local = package_path(name[len(SCHEME) :]) if name.startswith(SCHEME) else name
    return local if "://" not in local and os.path.isdir(local) else None


def _folder_files(name: str, folder: str) -> BilmFiles:
    if folder.startswith(SCHEME):  # a published biLM: its two files, downloaded when read
        return BilmFiles(f"{folder}/{OPTIONS_NAME}", f"{folder}/{WEIGHTS_NAME}")
    present = sorted(os.listdir(folder))
    base = name.rstrip("/")
    for fmt, needs in BILM_FOLDER_FORMATS.items():
        if all(file_name in present for file_name in needs):
            if fmt == BILM_TF:
                return BilmFiles(f"{base}/{OPTIONS_NAME}", f"{base}/{WEIGHTS_NAME}")
            return BilmFiles(folder, None, fmt)
    raise ConfigurationError(
        f"the folder {name!r} holds no biLM: it has {_listed(present)}; a biLM folder holds "
        + "; or ".join(
            f"{' and '.join(needs)} ({fmt})" for fmt, needs in BILM_FOLDER_FORMATS.items()
        )
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
            f"{', '.join(PUBLISHED_MODELS)}, and the shipped biLM is {SHIPPED_BILM}"
        )
