"""
`ElmoBiLstm`, the contextual part of ELMo's biLM: its parameters (`BiLstmLayer`) and the one
place that chooses how a batch runs (`ElmoBiLstm.forward`, by its `Execution`): the packed
path (`elmo_plugin.elmo.bilm.lstm.packed`, the CPU's) or the dense one
(`elmo_plugin.elmo.bilm.lstm.dense`, the GPU's, sorted by length for some inference). The
paths take the layers' weights and know nothing of this module.
"""

import dataclasses
import functools
from typing import List, Optional, Tuple, cast

import torch

from elmo_plugin.elmo.bilm.lstm import dense, packed, triton_gates
from elmo_plugin.elmo.bilm.lstm.cuda_graphs import GraphCache
from elmo_plugin.elmo.bilm.lstm.gate_math import LayerWeights, LstmState
from elmo_plugin.elmo.bilm.lstm.packed_state_product import PackedStateProduct
from elmo_plugin.elmo.execution.compute_dtype import ReducedCopies
from elmo_plugin.elmo.execution.recurrence_threads import chooser_for, layer_result_equal
from elmo_plugin.elmo.execution import devices
from elmo_plugin.elmo.execution.settings import Conditions, Execution

__all__ = ["BiLstmLayer", "ElmoBiLstm", "LstmPath", "LstmState"]


@dataclasses.dataclass(frozen=True)
class LstmPath:
    """The path a batch ran on, as `ElmoBiLstm.choose_path` chose it from the `Execution`."""

    fused: bool
    cuda_graphs: bool = False
    sorted: bool = False
    triton: bool = False
    measured_threads: bool = False  # the packed recurrence at the thread count measured faster

    def described(self) -> str:
        if not self.fused:
            threads = "adaptive" if self.measured_threads else "torch's count"
            return f"packed (recurrence threads: {threads})"
        gates = "Triton" if self.triton else "torch"
        mode = " + CUDA graphs" if self.cuda_graphs else ", sorted by length" if self.sorted else ""
        return f"fused{mode} ({gates} gates)"


class BiLstmLayer(torch.nn.Module):
    """
    One layer of ELMo's LSTM in both directions, run together: an LSTM with a projected
    hidden state (Sak et al. 2014), memory clipping and projection clipping.

    Each weight stacks the forward (index 0) and the backward (index 1) direction. The gates
    are kept in the order input, forget, output, candidate, so that one sigmoid covers three.

    # Parameters

    input_size : `int`
    hidden_size : `int`
        Size of the projected hidden state (bilm-tf's `projection_dim`).
    cell_size : `int`
        Size of the memory cell (bilm-tf's `dim`).
    cell_clip : `float`, optional
    proj_clip : `float`, optional
    compute_dtype : `torch.dtype`, optional (default = `torch.float32`)
        The dtype of the matrix products; see `elmo_plugin.elmo.execution.compute_dtype`.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        cell_size: int,
        cell_clip: Optional[float] = None,
        proj_clip: Optional[float] = None,
        compute_dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.cell_size = cell_size
        self.cell_clip = cell_clip
        self.proj_clip = proj_clip
        self.input_weight = torch.nn.Parameter(torch.empty(2, input_size, 4 * cell_size))
        self.state_weight = torch.nn.Parameter(torch.empty(2, hidden_size, 4 * cell_size))
        self.bias = torch.nn.Parameter(torch.zeros(2, 1, 4 * cell_size))
        self.projection_weight = torch.nn.Parameter(torch.empty(2, cell_size, hidden_size))
        self.compute_dtype = compute_dtype
        self._reduced = ReducedCopies()
        self._packed_state = PackedStateProduct()
        self.graphs = GraphCache()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for weight in (self.input_weight, self.state_weight, self.projection_weight):
            for direction in weight:
                torch.nn.init.orthogonal_(direction.data)
        self.bias.data.zero_()
        # Forget gate bias 1 (Jozefowicz et al. 2015), as bilm-tf's forget_bias.
        self.bias.data[:, :, self.cell_size : 2 * self.cell_size] = 1.0

    def run_packed(
        self,
        inputs: torch.Tensor,
        batch_sizes: List[int],
        initial: Tuple[torch.Tensor, torch.Tensor],
    ) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
        """The layer on the packed path (`packed.run_layer`)."""
        weights = self.weights()
        rows = batch_sizes[0] if batch_sizes else 1
        step_product = packed.step_product(self._packed_state, weights.state_weight, rows)
        return packed.run_layer(weights, step_product, inputs, batch_sizes, initial)

    def run_dense(
        self,
        cuda_graphs: bool,
        inputs: torch.Tensor,
        lengths: torch.Tensor,
        initial: Tuple[torch.Tensor, torch.Tensor],
        running: Optional[List[int]] = None,
    ) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
        """The layer on the dense path (`dense.run_layer`), its step loops replayed as CUDA
        graphs with `cuda_graphs`."""
        graphs = self.graphs if cuda_graphs else None
        return dense.run_layer(self.weights(), graphs, inputs, lengths, initial, running)

    def _apply(self, fn, *args, **kwargs):
        # The graphs' buffers stay on the device and in the dtype they were captured in.
        self.graphs.clear()
        return super()._apply(fn, *args, **kwargs)

    def weights(self) -> LayerWeights:
        """The input, recurrent and projection weights in the compute dtype, the bias and the
        clipping."""
        matrices: Tuple[torch.Tensor, ...] = (
            self.input_weight,
            self.state_weight,
            self.projection_weight,
        )
        if self.compute_dtype != torch.float32:
            # Converted once per forward pass of the layer (and kept while frozen). No
            # column-major copy: for the bfloat16 step product it gave no consistent gain.
            matrices = tuple(self._reduced.get(matrices, self.compute_dtype))
        input_weight, state_weight, projection_weight = matrices
        return LayerWeights(
            input_weight, state_weight, self.bias, projection_weight, self.cell_clip, self.proj_clip
        )


class ElmoBiLstm(torch.nn.Module):
    """
    The contextual part of ELMo's biLM: `num_layers` layers of forward and backward LSTMs with
    projections and clipping, independent directions, and residual connections from the
    second layer on (bilm-tf's `use_skip_connections`).

    Two paths, the same function. On the CPU the batch is packed once: padding is never
    computed, both directions share each step's matrix products, and the input side of every
    gate is one matrix product per layer. On CUDA (or with `Execution(fused=True)`) every
    step runs on the whole batch with nothing read back to the host, the gate math of a step
    fused into one Triton kernel (`elmo_plugin.elmo.bilm.lstm.fused_layer`); inference there may run
    sorted by length instead (`sorts_inference`). Either way the biLM runs in its own
    `compute_dtype`, with AMP's autocast turned off.

    # Parameters

    input_size : `int`
    hidden_size : `int`
        bilm-tf's `projection_dim`.
    cell_size : `int`
        bilm-tf's `dim`.
    num_layers : `int`
    cell_clip : `float`, optional
    proj_clip : `float`, optional
    use_skip_connections : `bool`, optional (default = `True`)
    dropout : `float`, optional (default = `0.0`)
        Dropout on each layer's input while training (bilm-tf's `DropoutWrapper`); the
        residual connection adds the dropped input, as bilm-tf does.
    compute_dtype : `torch.dtype`, optional (default = `torch.float32`)
        The dtype of every layer's matrix products; see `elmo_plugin.elmo.execution.compute_dtype`.
    execution : `Execution`, optional (default = `Execution()`, "auto")
        Which path runs a batch (`forward`); replaced with `ElmoBiLm.set_execution`.
    """

    # The path of the latest batch (`choose_path`), for the biLM's log; a class attribute, so
    # that an LSTM pickled whole before it existed still runs.
    last_path: Optional[LstmPath] = None

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        cell_size: int,
        num_layers: int,
        cell_clip: Optional[float] = None,
        proj_clip: Optional[float] = None,
        use_skip_connections: bool = True,
        dropout: float = 0.0,
        compute_dtype: torch.dtype = torch.float32,
        execution: Execution = Execution(),
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.cell_size = cell_size
        self.num_layers = num_layers
        self.use_skip_connections = use_skip_connections
        self.layers = torch.nn.ModuleList(
            BiLstmLayer(
                input_size if i == 0 else hidden_size,
                hidden_size,
                cell_size,
                cell_clip,
                proj_clip,
                compute_dtype,
            )
            for i in range(num_layers)
        )
        self.dropout = torch.nn.Dropout(dropout)
        self.execution = execution

    @property
    def bilstm_layers(self) -> List[BiLstmLayer]:
        # A `ModuleList` yields plain `Module`s to the checker; these are `BiLstmLayer`s.
        return cast(List[BiLstmLayer], list(self.layers))

    @property
    def compute_dtype(self) -> torch.dtype:
        """The layers' (one for all of them, given at construction)."""
        return self.bilstm_layers[0].compute_dtype

    def zero_state(self, batch_size: int, like: torch.Tensor) -> LstmState:
        return LstmState(
            like.new_zeros(self.num_layers, 2, batch_size, self.hidden_size),
            like.new_zeros(self.num_layers, 2, batch_size, self.cell_size),
        )

    def forward(
        self,
        inputs: torch.Tensor,
        mask: torch.BoolTensor,
        initial_state: Optional[LstmState] = None,
    ) -> Tuple[List[torch.Tensor], LstmState]:
        """
        # Parameters

        inputs : `torch.Tensor`
            `(batch_size, timesteps, input_size)`.
        mask : `torch.BoolTensor`
            `(batch_size, timesteps)`, each row a prefix of `True`s.
        initial_state : `LstmState`, optional
            States for each row of the batch; zeros when not given.

        # Returns

        The output of each layer, `(batch_size, timesteps, 2 * hidden_size)` with the forward
        direction first and zeros at padding, and the final state of each row.
        """
        if initial_state is None:
            initial_state = self.zero_state(inputs.size(0), inputs)
        # The biLM runs in its own compute dtype: under AMP's autocast its products would
        # otherwise be float16, whose range its unclipped sums exceed.
        with torch.autocast(inputs.device.type, enabled=False):
            path = self.last_path = self.choose_path(inputs, initial_state)
            if path.fused:
                return self._forward_fused(path, inputs.float(), mask, initial_state)
            return self._forward_packed(path, inputs.float(), mask, initial_state)

    def runs_fused(self, inputs: torch.Tensor) -> bool:
        """Whether a batch runs on the fused dense path: `execution.fused` when set, else on
        CUDA; the packed path serves the CPU, where padding is arithmetic it lacks."""
        return self.execution.runs_fused(inputs.device)

    def choose_path(self, inputs: torch.Tensor, initial_state: LstmState) -> LstmPath:
        """The path of a batch, as the `Execution` asks; a `ConfigurationError` listing every
        reason where a choice given as `true` cannot run on it (`Execution.refusals`)."""
        device = inputs.device
        gradients = self._needs_gradients(inputs, initial_state)
        bfloat16 = devices.runs_bfloat16(device)
        conditions = Conditions(device, gradients, triton_gates.TRITON_INSTALLED, bfloat16)
        self.execution.check_runs(conditions, self.compute_dtype)
        if not self.runs_fused(inputs):
            return LstmPath(
                False, measured_threads=self.execution.adaptive_threads and not gradients
            )
        graphs = self.execution.uses_cuda_graphs(device)
        ordered = not graphs and not gradients and self.sorts_inference()
        return LstmPath(True, graphs, ordered, triton_gates.uses_triton(inputs))

    def _forward_packed(
        self, path: LstmPath, inputs: torch.Tensor, mask: torch.BoolTensor, initial_state: LstmState
    ) -> Tuple[List[torch.Tensor], LstmState]:
        runs = [
            functools.partial(_run_measured, layer) if path.measured_threads else layer.run_packed
            for layer in self.bilstm_layers
        ]
        return packed.run_packed(
            runs, inputs, mask, initial_state, self.dropout, self.use_skip_connections
        )

    def _forward_fused(
        self, path: LstmPath, inputs: torch.Tensor, mask: torch.BoolTensor, initial_state: LstmState
    ) -> Tuple[List[torch.Tensor], LstmState]:
        graphs = path.cuda_graphs
        runs = [functools.partial(layer.run_dense, graphs) for layer in self.bilstm_layers]
        arguments = (runs, inputs, mask, initial_state, self.dropout, self.use_skip_connections)
        if path.sorted:
            return dense.run_sorted(*arguments)
        return dense.run_dense(*arguments, graph_shapes=graphs)

    def sorts_inference(self) -> bool:
        """Whether an inference pass on the fused path outside CUDA graphs runs sorted by
        length (`dense.run_sorted`): `execution.sorted_inference` when set, else where it was
        measured to pay (docs/performance.md), float32 products with cells of at least
        `dense.SORTED_INFERENCE_MIN_CELL`: where the products are small or on tensor cores,
        launches and the host set the pace, and the sort adds a read and gathers."""
        if self.execution.sorted_inference is not None:
            return self.execution.sorted_inference
        return (
            self.compute_dtype == torch.float32
            and self.cell_size >= dense.SORTED_INFERENCE_MIN_CELL
        )

    def _needs_gradients(self, inputs: torch.Tensor, initial_state: LstmState) -> bool:
        tensors = [inputs, *initial_state, *self.parameters()]
        return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


def _run_measured(
    layer: BiLstmLayer, *arguments
) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
    """`layer.run_packed(*arguments)` at the thread count its chooser measures faster."""
    shape = (layer.input_size, layer.hidden_size, layer.cell_size, layer.compute_dtype)
    chooser = chooser_for(shape)
    return chooser.run(lambda: layer.run_packed(*arguments), layer_result_equal)
