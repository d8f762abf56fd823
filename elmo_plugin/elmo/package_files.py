"""
Files of the installed package that configs can name from any working directory:
`elmo_plugin://pretrained/elmo_wikipedia_512x128/options.json` is the shipped biLM's
`options.json` wherever site-packages (or the clone) is.
"""

import importlib.resources
import os

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path

SCHEME = "elmo_plugin://"
SHIPPED_BILM = SCHEME + "pretrained/elmo_wikipedia_512x128"


class MissingFileError(ConfigurationError):
    """A file a config names does not exist."""


def package_path(relative: str) -> str:
    """The local path of `relative` inside the installed `elmo_plugin` package."""
    return str(importlib.resources.files("elmo_plugin").joinpath(relative))


def local_file(path: str, what: str) -> str:
    """
    The local path of `path` (a path, a URL AllenNLP's `cached_path` reads, or
    `elmo_plugin://...`), checked to exist: a missing file is a `ConfigurationError` that
    names `what` it was for, the path tried and how to name another one.
    """
    if path.startswith(SCHEME):
        local = package_path(path[len(SCHEME) :])
    elif "://" in path:
        return cached_path(path)
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
