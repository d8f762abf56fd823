"""
How the biLM runs, one setting for all of it: the compute dtype, which LSTM path, CUDA graphs,
sorted inference, the character encoder's deduplication and TF32, given once (`Execution`)
where the biLM is built (`Elmo`, the `elmo` embedder, the `bilm` model, `ElmoEmbedder`,
`elmo-embed`, `load_bilm`: each takes `execution`, a config block or `"auto"`, and the older
top-level `compute_dtype` beside it, `Execution.resolve`) and read by the modules it reaches.
`"auto"` (or null) chooses by device as measured (docs/performance.md): the fused dense path on
CUDA and the packed path elsewhere, sorted inference for float32 cells of 4096 or more.

Choices that cannot run together are refused on construction with every reason at once (as
xformers' attention dispatch does); a choice given as `true` that cannot run on a batch's input
(`refusals`: its device, dtype, Triton, gradients) is refused at that batch, again with every
reason, never run otherwise in silence. `"auto"` is what serves a CPU and a GPU with one config
(`cuda_graphs: "auto"`: on CUDA, as the paper's `bilm` config asks). `tf32` is a permission, not
a demand: it lets CUDA's products use TF32 and has nothing to permit elsewhere.
"""

import contextlib
import dataclasses
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Union

import torch

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution import devices
from elmo_plugin.elmo.execution.compute_dtype import COMPUTE_DTYPES, FLOAT32, parse_compute_dtype

AUTO = "auto"
# The settings that `"auto"` (or null) leaves to the device.
AUTO_KEYS = ("fused", "cuda_graphs", "sorted_inference")
COMPUTE_DTYPE = "compute_dtype"


class Conditions(NamedTuple):
    """What a batch brings that a setting may not run on."""

    device: torch.device
    gradients: bool  # whether gradients must flow through the biLM on this batch
    triton_installed: bool
    bfloat16_runs: bool  # whether the device runs bfloat16 products (not a CUDA GPU before sm_80)


@dataclasses.dataclass(frozen=True)
class Execution:
    """
    # Parameters

    fused : `bool`, optional (default = `None`, "auto": on CUDA)
        The fused dense LSTM path (every step on every sequence, Triton gate kernels on CUDA,
        the same arithmetic in torch elsewhere) instead of the packed one. `true` on CUDA needs
        Triton; "auto" there runs the fused path with torch's gate operations where it is
        missing.
    cuda_graphs : `bool`, optional (default = `False`)
        Replay the fused path's step loops as CUDA graphs where shapes recur: `true` demands it
        (a batch on another device is refused), `None` ("auto") uses them where the input is on
        CUDA and the fused path runs (but for `sorted_inference: true`).
    sorted_inference : `bool`, optional (default = `None`: float32 cells of 4096 or more)
        Run inference on the fused path sorted by length, each step on the running sequences;
        `true` refuses a batch that gradients must flow through or that the fused path does not
        run.
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
    compute_dtype : `str`, optional (default = `None`: `"float32"`, or the dtype the biLM was
        built in)
        `"float32"` (exact) or `"bfloat16"` (`elmo_plugin.elmo.execution.compute_dtype`). The
        entry points always fill it (`resolve`), `"float32"` unless given; `None` is for the
        core's builders, which take a `torch.dtype` beside.
    """

    fused: Optional[bool] = None
    cuda_graphs: Optional[bool] = False
    sorted_inference: Optional[bool] = None
    deduplicates: bool = True
    tf32: bool = False
    adaptive_threads: bool = True
    compute_dtype: Optional[str] = None

    def __post_init__(self) -> None:
        # Checked however it is built: `Execution(fused="false")` would otherwise mean fused.
        for key, setting in self.paths().items():
            if not (isinstance(setting, bool) or (setting is None and key in AUTO_KEYS)):
                raise ConfigurationError(
                    f"execution.{key} must be true or false"
                    f"{f' or null/{AUTO!r}' if key in AUTO_KEYS else ''}, got {setting!r}"
                )
        if self.compute_dtype is not None:
            parse_compute_dtype(self.compute_dtype, f"execution.{COMPUTE_DTYPE}")
        reasons = self._contradictions()
        if reasons:
            raise ConfigurationError(_refusal(self, reasons))

    @classmethod
    def parse(cls, value: Union[None, str, Dict[str, Any], "Execution"]) -> "Execution":
        """An `Execution` from a config's `execution` value: `"auto"` (or None), an object with
        `Execution`'s keys (`"auto"` for null where a key allows it), or an `Execution`."""
        if isinstance(value, Execution):
            return value
        if value is None or value == AUTO:
            return cls()
        if not isinstance(value, dict):
            raise ConfigurationError(
                f'execution must be "{AUTO}" or an object with the keys '
                f"{', '.join(KEYS)}, got {value!r}"
            )
        unknown = sorted(set(value) - set(KEYS))
        if unknown:
            raise ConfigurationError(
                f"execution has no key {', '.join(map(repr, unknown))}; its keys are "
                f"{', '.join(KEYS)}"
            )
        settings: Dict[str, Any] = {
            key: None if key in AUTO_KEYS and setting == AUTO else setting
            for key, setting in value.items()
        }
        return cls(**settings)

    @classmethod
    def resolve(
        cls,
        value: Union[None, str, Dict[str, Any], "Execution"],
        compute_dtype: Optional[str] = None,
        named: str = COMPUTE_DTYPE,
        execution_named: str = "execution",
    ) -> "Execution":
        """
        The setting an entry point runs with: its `execution` (`parse`) and its older top-level
        `compute_dtype` (`named` says how the user gave it, e.g. `--compute-dtype`), which may
        each give the compute dtype; given both ways they must agree. Unless given, float32.
        """
        execution = cls.parse(value)
        if compute_dtype is None:
            compute_dtype = execution.compute_dtype or FLOAT32
        elif execution.compute_dtype not in (None, compute_dtype):
            raise ConfigurationError(
                f"{named} {compute_dtype!r} and {execution_named}'s {COMPUTE_DTYPE} "
                f"{execution.compute_dtype!r} disagree: give the compute dtype once"
            )
        parse_compute_dtype(compute_dtype, named)
        return dataclasses.replace(execution, compute_dtype=compute_dtype)

    @property
    def dtype(self) -> torch.dtype:
        """The compute dtype as a `torch.dtype` (float32 where not given)."""
        return COMPUTE_DTYPES[self.compute_dtype or FLOAT32]

    def runs_fused(self, device: torch.device) -> bool:
        return self.fused if self.fused is not None else devices.runs_fused_by_default(device)

    def uses_cuda_graphs(self, device: torch.device) -> bool:
        """Whether the fused path's step loops replay as CUDA graphs on `device`."""
        if self.cuda_graphs is not None:
            return self.cuda_graphs
        # Sorted inference, where asked, runs outside graphs (shapes follow the running rows).
        fused = self.runs_fused(device) and not self.sorted_inference
        return fused and devices.captures_cuda_graphs(device)

    def refusals(self, conditions: Conditions, dtype: torch.dtype) -> List[str]:
        """Every reason this setting cannot run a batch as asked (computing in `dtype`), each
        naming the setting, what the batch brings and what would make it run; none for what
        `"auto"` chooses, which runs wherever it is chosen."""
        device = conditions.device
        reasons = []
        if self.cuda_graphs and not devices.captures_cuda_graphs(device):
            reasons.append(
                f"cuda_graphs is true and the input is on {device}: CUDA graphs replay on CUDA "
                f'only; move the biLM and its input to CUDA, or set cuda_graphs "{AUTO}" (on '
                "CUDA, none elsewhere) or false"
            )
        if self.fused and devices.on_cuda(device) and not conditions.triton_installed:
            reasons.append(
                f"fused is true and the input is on {device}, where the fused path's gate "
                "kernels need Triton, which is not installed: install triton, or set fused "
                f'"{AUTO}" (the fused path with torch\'s gate operations)'
            )
        reasons += self._sorting_refusals(conditions)
        if dtype == torch.bfloat16 and not conditions.bfloat16_runs:
            reasons.append(
                f"compute_dtype is bfloat16 and the input is on {device}, which has no bfloat16 "
                "products (a CUDA GPU before compute capability 8.0, Ampere): set compute_dtype "
                '"float32"'
            )
        return reasons

    def _sorting_refusals(self, conditions: Conditions) -> List[str]:
        if not self.sorted_inference:
            return []
        device = conditions.device
        reasons = []
        if not self.runs_fused(device):
            reasons.append(
                f"sorted_inference is true and the input is on {device}, where the packed path "
                "runs (it computes no padding, sorted or not): sorted inference is a mode of "
                f'the fused path: set fused true, or sorted_inference "{AUTO}"'
            )
        if conditions.gradients:
            reasons.append(
                "sorted_inference is true and gradients must flow through the biLM (it is "
                "trained, or its input requires them): sorted inference runs without gradients "
                f'only (torch.no_grad(), or a frozen biLM); set sorted_inference "{AUTO}"'
            )
        return reasons

    def check_runs(self, conditions: Conditions, dtype: torch.dtype) -> None:
        """A `ConfigurationError` listing every reason of `refusals`, where there is one."""
        reasons = self.refusals(conditions, dtype)
        if reasons:
            raise ConfigurationError(_refusal(self, reasons))

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
            f"{key}={AUTO if value is None else value}"
            for key, value in dataclasses.asdict(self).items()
        )

    def paths(self) -> Dict[str, Any]:
        """Every choice but the compute dtype: how the biLM runs in whatever dtype (a bulk job's
        record keeps these, beside a digest of the biLM that covers its dtype)."""
        return {key: getattr(self, key) for key in KEYS if key != COMPUTE_DTYPE}

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


KEYS = tuple(field.name for field in dataclasses.fields(Execution))


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
