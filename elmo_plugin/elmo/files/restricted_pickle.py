"""
Reading torch weight files from someone else without running their code.

A torch weight file is a pickle, and unpickling a pickle may call anything it names
(`__reduce__`): a model folder or archive could run code on the machine that merely opens it.
Torch from 1.13 refuses everything but tensors and state dicts with `weights_only=True`; torch
1.12 (the allennlp-2.10 install profile) has no such switch, so there `torch.load` is given this
module as its `pickle_module`, whose `Unpickler` finds only the few globals a state dict of
tensors needs (`ALLOWED_GLOBALS`, torch's storage types, dtypes) and refuses any other.
`load_tensors` is the one entry point: the file read either way, a refusal a one-line
`ConfigurationError` naming the file.
"""

import inspect
import pickle
import re
import sys
from typing import IO, Any, Optional, Union

import torch

from elmo_plugin.elmo.errors import ConfigurationError

# What `torch.save` of a state dict (or a dict of tensors and parameters) pickles by name.
ALLOWED_GLOBALS = {
    ("collections", "OrderedDict"),
    ("torch", "Size"),
    ("torch._utils", "_rebuild_tensor"),
    ("torch._utils", "_rebuild_tensor_v2"),
    ("torch._utils", "_rebuild_parameter"),
    ("torch._utils", "_rebuild_parameter_with_state"),
}
WHAT_IS_READ = (
    "only tensors and state dicts are read from weight files, since a pickle may run code"
)


class RefusedGlobal(pickle.UnpicklingError):
    """A pickle named a global outside `ALLOWED_GLOBALS`."""


class Unpickler(pickle.Unpickler):
    """An unpickler that finds `ALLOWED_GLOBALS`, torch's dtypes and storage types only."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in ALLOWED_GLOBALS:
            return super().find_class(module, name)
        if module == "torch" and isinstance(getattr(torch, name, None), torch.dtype):
            return getattr(torch, name)
        if module == "torch" and name.endswith("Storage") and hasattr(torch, name):
            return getattr(torch, name)
        raise RefusedGlobal(f"refused to unpickle {module}.{name}")


def load(file: IO[bytes], **options: Any) -> Any:
    """`pickle.load` through `Unpickler` (what torch calls on its `pickle_module`)."""
    return Unpickler(file, **options).load()


def has_weights_only() -> bool:
    """Whether this torch's `torch.load` can refuse code itself (`weights_only`, torch 1.13+)."""
    return "weights_only" in inspect.signature(torch.load).parameters


def load_tensors(source: Union[str, IO[bytes]], name: str) -> Any:
    """What the torch file `source` (a path or an open binary file, named `name` in errors)
    holds, on the CPU, with no global but a state dict's unpickled; a `ConfigurationError`
    naming `name` for any other."""
    try:
        if has_weights_only():
            return torch.load(source, map_location="cpu", weights_only=True)
        return torch.load(source, map_location="cpu", pickle_module=sys.modules[__name__])
    except pickle.UnpicklingError as error:
        raise ConfigurationError(f"{name}: {_refusal(error)[:300]}; {WHAT_IS_READ}") from error


def _refusal(error: pickle.UnpicklingError) -> str:
    """What was refused, in one line: torch's own refusal (`weights_only`) is a page long."""
    message = str(error)
    named = re.search(r"GLOBAL ([\w.]+)", message)
    if named:
        return f"refused to unpickle {named.group(1)}"
    detail = re.search(r"WeightsUnpickler error: ([^\n]*)", message)
    return detail.group(1) if detail else message.strip().split("\n")[0]


def check_tensors_only(path: str, name: Optional[str] = None) -> None:
    """A `ConfigurationError` naming `name` (default `path`) unless the torch file `path` holds
    only tensors and state dicts (read whole, then dropped: for a file that another loader
    unpickles in full)."""
    load_tensors(path, name or path)
