"""
Files that configs can name from any working directory:
`elmo_plugin://pretrained/elmo_wikipedia_512x128/options.json` is the shipped biLM's
`options.json` wherever site-packages (or the clone) is, and
`elmo_plugin://published/<name>/weights.hdf5` a published biLM's file, downloaded once.
"""

import difflib
import importlib.resources
import os
import posixpath
import socket
import urllib.parse
from typing import BinaryIO, Mapping, Optional, Union

from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.files.zip_archives import member_bytes, outer_file
from elmo_plugin.elmo.formats.naming.published_models import PREFIX, published_url

SCHEME = "elmo_plugin://"
PACKAGE = "elmo_plugin"
# The task configs: the clone's top-level `training_configs/`, installed as this package
# (setup.py), so `elmo_plugin://training_configs/...` names them in a clone and a wheel alike.
CONFIGS = "training_configs"
CONFIGS_PACKAGE = PACKAGE + "." + CONFIGS
SHIPPED_BILM = SCHEME + "pretrained/elmo_wikipedia_512x128"
# AllenNLP's download cache (`allennlp.common.file_utils.CACHE_DIRECTORY`), so that a file
# AllenNLP downloaded before is found again.
CACHE_DIRECTORY = os.path.join(
    os.environ.get("ALLENNLP_CACHE_ROOT", os.path.expanduser(os.path.join("~", ".allennlp"))),
    "cache",
)
# How many names of a folder an error about a missing path shows.
_CLOSE_NAMES = 5
# How long to wait for a URL's host before saying it cannot be reached.
CONNECT_TIMEOUT_S = 5.0


def no_such_path(name: str, what: str, expected: str) -> MissingFileError:
    """The error for the local path `name`, which `what` names, when nothing is there: the
    path tried, the nearest folder that exists and the names in it closest to the missing one,
    and `expected` (what to name instead)."""
    tried = os.path.abspath(os.path.expanduser(name))
    missing, parent = os.path.basename(tried.rstrip(os.sep)), os.path.dirname(tried.rstrip(os.sep))
    while not os.path.isdir(parent):
        missing, parent = os.path.basename(parent), os.path.dirname(parent)
    try:
        entries = sorted(os.listdir(parent))
    except OSError:
        entries = []
    close = difflib.get_close_matches(missing, entries, n=_CLOSE_NAMES, cutoff=0.5)
    shown = close or entries[:_CLOSE_NAMES]
    holds = (
        f"holding {', '.join(shown)}{' ...' if len(entries) > len(shown) else ''}"
        if shown
        else "empty"
    )
    return MissingFileError(
        f"{what} {name!r}: no such file or folder (tried {tried}; the nearest folder there is "
        f"{parent}, {holds}); {expected}"
    )


def package_path(relative: str) -> str:
    """
    The local path of `relative` inside the installed `elmo_plugin` package (its configs under
    `training_configs/`), normalised first: a name that would leave the package (an absolute
    path, `..` above its top) is a `ConfigurationError`.
    """
    normal = posixpath.normpath(relative) if relative else ""
    if os.path.isabs(normal) or normal == ".." or normal.startswith("../"):
        raise ConfigurationError(
            f"{SCHEME}{relative}: names a file outside the elmo_plugin package; "
            f"name a file inside it, as {SHIPPED_BILM}/options.json"
        )
    normal = "" if normal == "." else normal
    top, _, rest = normal.partition("/")
    if top == CONFIGS:
        return os.path.join(configs_directory(), rest) if rest else configs_directory()
    return str(importlib.resources.files(PACKAGE).joinpath(normal)) if normal else package_root()


def package_root() -> str:
    """The folder of the installed `elmo_plugin` package."""
    return str(importlib.resources.files(PACKAGE))


def configs_directory() -> str:
    """The folder of the installed task configs: the package `elmo_plugin.training_configs`,
    or, where the package is imported from a bare clone on `PYTHONPATH` (no install), the
    clone's `training_configs/` beside it."""
    try:
        return str(importlib.resources.files(CONFIGS_PACKAGE))
    except ModuleNotFoundError:
        return os.path.join(os.path.dirname(package_root()), CONFIGS)


def local_file(path: str, what: str) -> str:
    """
    The local path of `path` (a path, a URL AllenNLP's `cached_path` reads, or
    `elmo_plugin://...`), checked to exist: a missing file is a `ConfigurationError` that
    names `what` it was for, the path tried and how to name another one.
    """
    if path.startswith(SCHEME + PREFIX):
        return fetch(published_url(path[len(SCHEME) :]), what)
    if path.startswith(SCHEME):
        local = package_path(path[len(SCHEME) :])
    elif "://" in path:
        return fetch(path, what)
    else:
        local = os.path.expanduser(path)
    if not os.path.isfile(local):
        tried = os.path.abspath(local)
        relative = (
            ""
            if path.startswith(SCHEME) or os.path.isabs(local)
            else (f", relative to the working directory {os.getcwd()}")
        )
        raise MissingFileError(
            f"{what} {path!r} not found (tried {tried}{relative}). Name another file (e.g. the "
            f"overrides '...options_file' and '...weight_file' of the elmo block), an absolute "
            f"path, or the shipped biLM as '{SHIPPED_BILM}/options.json' and "
            f"'{SHIPPED_BILM}/weights.hdf5'."
        )
    return local


def local_source(name: str, what: str) -> Union[str, BinaryIO]:
    """What to read the file `name` from: a ZIP member's bytes in memory, else its local path
    (`local_file`, which also downloads a URL), checked to exist."""
    member = member_bytes(name, what)
    return local_file(name, what) if member is None else member


def local_path(name: Union[str, "os.PathLike[str]"]) -> Optional[str]:
    """The real local path that `name` (a path, `elmo_plugin://...`, a published file) stands
    for, or None for a URL or a published file not downloaded: what to compare a command's
    output against, so that no output overwrites an input however either is named."""
    text = os.fspath(name)
    if text.startswith(SCHEME + PREFIX):
        cached = cached_copy(text)
        return None if cached is None else os.path.realpath(cached)
    if text.startswith(SCHEME):
        return os.path.realpath(package_path(text[len(SCHEME) :]))
    if "://" in text:
        return None
    return os.path.realpath(os.path.expanduser(text))


def cached_copy(name: str) -> Optional[str]:
    """The copy in the download cache of `name` (a URL, or `elmo_plugin://published/...`),
    or None when it was never downloaded; nothing is downloaded."""
    url = published_url(name[len(SCHEME) :]) if name.startswith(SCHEME + PREFIX) else name
    try:
        import cached_path
    except ImportError:
        return None
    cached = cached_path.find_latest_cached(url, CACHE_DIRECTORY)
    return None if cached is None else str(cached)


def fetch(url: str, what: str) -> str:
    """
    The local copy of `url` in AllenNLP's cache, downloaded the first time by the
    `cached_path` package (installed with the `allennlp` extra, or on its own). When its host
    cannot be reached within `CONNECT_TIMEOUT_S`, the copy cached before, if any; else, as
    when the download fails, a `MissingFileError` naming `what`, the URL and how to use a
    local copy instead.
    """
    try:
        import cached_path
        import requests  # cached_path's own dependency, whose errors it raises
    except ImportError as error:
        raise MissingFileError(
            f"{what} {url} is a URL, and downloading needs the cached-path package: "
            "pip install cached-path, or name a local file"
        ) from error
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("http", "https") and parts.hostname:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            socket.create_connection((parts.hostname, port), timeout=CONNECT_TIMEOUT_S).close()
        except OSError as error:
            cached = cached_copy(url)
            if cached is not None:
                return cached
            raise MissingFileError(_not_downloaded(url, what, error)) from error
    try:
        return str(cached_path.cached_path(url, cache_dir=CACHE_DIRECTORY))
    except (requests.exceptions.RequestException, OSError) as error:
        raise MissingFileError(_not_downloaded(url, what, error)) from error


def _not_downloaded(url: str, what: str, error: Exception) -> str:
    name = os.path.basename(urllib.parse.urlsplit(url).path) or "the file"
    return (
        f"{what} {url} could not be downloaded ({type(error).__name__}: {error}); offline? "
        f"Fetch it where there is a connection (e.g. curl -L -o {name} '{url}') and name the "
        "local file instead (e.g. the overrides '...options_file' and '...weight_file' of the "
        "elmo block, or ElmoEmbedder(options_file, weight_file))."
    )


def refuse_overwriting(output: str, inputs: Mapping[str, Optional[str]]) -> None:
    """A `ConfigurationError` when the file `output` would be written over one of `inputs`
    (what it is, e.g. "--weight-file", to its name), both resolved to real paths first
    (`local_path`: `elmo_plugin://...` and downloaded published files included;
    None and URLs not downloaded are skipped; a ZIP member is its archive), compared after
    following symlinks, hard links included."""
    for what, name in inputs.items():
        path = None if name is None else local_path(outer_file(name))
        if path is None:
            continue
        if _same_file(local_path(output) or output, path):
            raise ConfigurationError(
                f"output file {output} is the {what} {path}; writing it would destroy the {what}"
            )


def _same_file(output: str, path: str) -> bool:
    if os.path.exists(output) and os.path.exists(path):
        return os.path.samefile(output, path)
    return os.path.realpath(output) == os.path.realpath(path)
