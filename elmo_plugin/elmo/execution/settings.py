"""
How the biLM runs, one setting for all of it: which LSTM path, CUDA graphs, sorted inference,
the character encoder's deduplication and TF32, given once (`Execution`) where the biLM is
built (`Elmo`, the `elmo` embedder, the `bilm` model, `ElmoEmbedder`, `load_bilm`: each takes
`execution`, a config block or `"auto"`) and read by the modules it reaches. `"auto"` chooses by
device as measured (docs/performance.md): the fused dense path on CUDA and the packed path
elsewhere, sorted inference for float32 cells of 4096 or more, deduplication on.

Choices that cannot run together are refused on construction with every reason at once (as
xformers' attention dispatch does). The CUDA-only ones (`cuda_graphs`, `tf32`) do nothing on
another device, so that one config serves a CPU and a GPU (the paper's `bilm` config asks for
CUDA graphs).
"""

import contextlib
import dataclasses
from typing import Any, Dict, Iterator, List, Optional, Union

import torch

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution import devices

AUTO = "auto"


@dataclasses.dataclass(frozen=True)
class Execution:
    """
    # Parameters

    fused : `bool`, optional (default = `None`: on CUDA)
        The fused dense LSTM path (every step on every sequence, Triton gate kernels on CUDA,
        the same arithmetic in torch elsewhere) instead of the packed one.
    cuda_graphs : `bool`, optional (default = `False`)
        Replay the fused path's step loops as CUDA graphs where shapes recur (on CUDA; nothing
        elsewhere).
    sorted_inference : `bool`, optional (default = `None`: float32 cells of 4096 or more)
        Run inference on the fused path sorted by length, each step on the running sequences.
    deduplicates : `bool`, optional (default = `True`)
        Encode each distinct token once in the character CNN; `False` encodes every position
        and reads nothing back to the host.
    tf32 : `bool`, optional (default = `False`)
        Let CUDA's float32 products and convolutions run in TF32 (nothing elsewhere) during the
        biLM's calls only:
        its forward pass, and the backward pass from the gradient of its outputs on (torch's
        switches are restored at the end of each, `tf32_backward`).
    adaptive_threads : `bool`, optional (default = `True`)
        In inference on the packed (CPU) path, run each layer's recurrence at torch's thread
        count or at one thread, whichever is measured faster now
        (`elmo_plugin.elmo.execution.recurrence_threads`: on a busy machine one thread can be
        several times faster); `False` always uses torch's count (and suits a program running
        torch from several Python threads at once: MKL's thread count is the process's).
    """

    fused: Optional[bool] = None
    cuda_graphs: bool = False
    sorted_inference: Optional[bool] = None
    deduplicates: bool = True
    tf32: bool = False
    adaptive_threads: bool = True

    def __post_init__(self) -> None:
        # Checked however it is built: `Execution(fused="false")` would otherwise mean fused.
        for key, setting in self._values().items():
            if not (isinstance(setting, bool) or (setting is None and _FIELDS[key])):
                raise ConfigurationError(
                    f"execution.{key} must be true or false"
                    f"{' or null (auto)' if _FIELDS[key] else ''}, got {setting!r}"
                )
        reasons = self._contradictions()
        if reasons:
            raise ConfigurationError(_refusal(self, reasons))

    @classmethod
    def parse(cls, value: Union[None, str, Dict[str, Any], "Execution"]) -> "Execution":
        """An `Execution` from a config's `execution` value: `"auto"` (or None), an object with
        `Execution`'s keys, or an `Execution`."""
        if isinstance(value, Execution):
            return value
        if value is None or value == AUTO:
            return cls()
        if not isinstance(value, dict):
            raise ConfigurationError(
                f'execution must be "{AUTO}" or an object with the keys '
                f"{', '.join(_FIELDS)}, got {value!r}"
            )
        unknown = sorted(set(value) - set(_FIELDS))
        if unknown:
            raise ConfigurationError(
                f"execution has no key {', '.join(map(repr, unknown))}; its keys are "
                f"{', '.join(_FIELDS)}"
            )
        return cls(**value)

    def runs_fused(self, device: torch.device) -> bool:
        return self.fused if self.fused is not None else devices.runs_fused_by_default(device)

    @contextlib.contextmanager
    def products(self) -> Iterator[None]:
        """The biLM's calls run inside this: TF32 on for them only when `tf32`."""
        if not self.tf32:
            yield
            return
        matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
        previous = matmul.allow_tf32, cudnn.allow_tf32
        matmul.allow_tf32 = cudnn.allow_tf32 = True
        try:
            yield
        finally:
            matmul.allow_tf32, cudnn.allow_tf32 = previous

    def tf32_backward(self, outputs: List[torch.Tensor]) -> List[torch.Tensor]:
        """`outputs` unchanged, but with `tf32` their backward pass (from their gradient to the
        end of that backward pass) runs with TF32 on, restored after it."""
        if not self.tf32 or not torch.is_grad_enabled():
            return outputs
        return list(_Tf32Backward.apply(*outputs))

    def described(self) -> str:
        """The choices made, for the log: `auto` for each left to the device."""
        return ", ".join(
            f"{key}={AUTO if value is None else value}" for key, value in self._values().items()
        )

    def _values(self) -> Dict[str, Any]:
        return {key: getattr(self, key) for key in _FIELDS}

    def _contradictions(self) -> List[str]:
        reasons = []
        if self.cuda_graphs and self.fused is False:
            reasons.append("cuda_graphs replays the fused path's steps, and fused is false")
        if self.sorted_inference and self.fused is False:
            reasons.append("sorted_inference is a mode of the fused path, and fused is false")
        if self.sorted_inference and self.cuda_graphs:
            reasons.append(
                "sorted_inference runs outside CUDA graphs (a graph needs shapes that recur), "
                "and cuda_graphs is true"
            )
        return reasons


# Each setting, and whether it may be None (chosen by device).
_FIELDS = {field.name: field.default is None for field in dataclasses.fields(Execution)}


def _refusal(execution: Execution, reasons: List[str]) -> str:
    listed = "; ".join(f"({i}) {reason}" for i, reason in enumerate(reasons, start=1))
    return f"execution {{{execution.described()}}} cannot run: {listed}"


class _Tf32Backward(torch.autograd.Function):
    """Identity forward; its backward turns TF32 on and has the autograd engine restore torch's
    switches when the backward pass ends (the engine's callback queue, which
    DistributedDataParallel uses the same way)."""

    @staticmethod
    def forward(ctx, *tensors: torch.Tensor):
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads: torch.Tensor):
        matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
        previous = matmul.allow_tf32, cudnn.allow_tf32
        if previous == (True, True):
            return grads  # on already: an enclosing bracket (or the user) restores it
        matmul.allow_tf32 = cudnn.allow_tf32 = True

        def restore() -> None:
            matmul.allow_tf32, cudnn.allow_tf32 = previous

        torch.autograd.Variable._execution_engine.queue_callback(restore)
        return grads
