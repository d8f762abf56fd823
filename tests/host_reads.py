"""`host_reads_forbidden()`: a context in which anything that would read a device value back to
the host (on a GPU, a synchronisation) raises, on the CPU too: `.item()`, `int(tensor)`,
`bool(tensor)`, `.tolist()` and `nonzero`, and, where torch has dispatch modes (2.0 and later),
every operator whose output size depends on a value (boolean indexing, `unique`,
`masked_select`, `nonzero` called from C++)."""

import contextlib
from typing import Iterator

import torch

try:
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:  # pragma: no cover
    TorchDispatchMode = None  # type: ignore[misc,assignment]

_METHODS = ("__int__", "__index__", "item", "tolist", "nonzero", "__bool__")
_OPERATORS = {
    "aten::nonzero",
    "aten::_local_scalar_dense",
    "aten::unique_dim",
    "aten::_unique2",
    "aten::unique_consecutive",
    "aten::masked_select",
}


def _reads_a_value(schema_name: str, args) -> bool:
    if schema_name in _OPERATORS:
        return True
    indices = args[1] if schema_name == "aten::index" and len(args) > 1 else ()
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices or ())


if TorchDispatchMode is not None:

    class _ForbiddenOperators(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if _reads_a_value(func._schema.name, args):
                raise AssertionError(f"{func._schema.name}: a device value read back to the host")
            return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def host_reads_forbidden() -> Iterator[None]:
    saved = {name: getattr(torch.Tensor, name) for name in _METHODS}

    def forbidden(name):
        def read(*args, **kwargs):
            raise AssertionError(f"Tensor.{name}: a device value read back to the host")

        return read

    for name in _METHODS:
        setattr(torch.Tensor, name, forbidden(name))
    try:
        with _operators_forbidden():
            yield
    finally:
        for name, method in saved.items():
            setattr(torch.Tensor, name, method)


def _operators_forbidden():
    if TorchDispatchMode is None or int(torch.__version__.split(".")[0]) < 2:
        return contextlib.nullcontext()
    return _ForbiddenOperators()
