from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple, cast

import torch

from elmo_plugin.elmo.compute_dtype import ReducedCopies, plus_float32
from elmo_plugin.elmo.fused_lstm_layer import LayerGraphs, fused_layer
from elmo_plugin.elmo.packed_state_product import PackedStateProduct

# `gates = sums + hidden @ state_weight` of one step, `(2, rows, 4 * cell)`.
StepProduct = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


class LstmState(NamedTuple):
    """Hidden `(num_layers, 2, batch, hidden)` and memory `(num_layers, 2, batch, cell)` states;
    index 0 of the second dimension is the forward direction, 1 the backward one."""

    hidden: torch.Tensor
    memory: torch.Tensor


class PackedBatch(NamedTuple):
    """Where each step's rows of a length-sorted batch live in a `(batch * timesteps)` view.

    `forward_index` walks every sequence left to right, `backward_index` right to left, both
    time-major; `batch_sizes[t]` sequences are still running at step `t`, always a prefix of
    the sorted batch, and in both directions the same ones, so the two run as one batch."""

    forward_index: torch.Tensor
    backward_index: torch.Tensor
    batch_sizes: List[int]
    sorting: torch.Tensor
    restoration: torch.Tensor


class LengthOrder(NamedTuple):
    """A batch sorted by length, longest first: `sorting` takes it to that order and
    `restoration` back; `running` `(timesteps, batch)`, time-major, says which sorted sequences
    still run at each step (always a prefix)."""

    sorting: torch.Tensor
    restoration: torch.Tensor
    sorted_lengths: torch.Tensor
    running: torch.Tensor


def sort_by_length(mask: torch.BoolTensor) -> LengthOrder:
    sorted_lengths, sorting = mask.sum(dim=1).sort(descending=True)
    steps = torch.arange(mask.size(1), device=mask.device)
    running = steps.unsqueeze(1) < sorted_lengths.unsqueeze(0)
    return LengthOrder(sorting, sorting.argsort(), sorted_lengths, running)


def pack_batch(mask: torch.BoolTensor) -> PackedBatch:
    order = sort_by_length(mask)
    timesteps = mask.size(1)
    step_of, row_of = order.running.nonzero(as_tuple=True)
    sequence = order.sorting[row_of]
    forward_index = sequence * timesteps + step_of
    backward_index = sequence * timesteps + (order.sorted_lengths[row_of] - 1 - step_of)
    batch_sizes = order.running.sum(dim=1)
    return PackedBatch(
        forward_index,
        backward_index,
        [int(size) for size in batch_sizes[batch_sizes > 0]],
        order.sorting,
        order.restoration,
    )


def _column_major(weights: torch.Tensor) -> torch.Tensor:
    """The same `(2, rows, columns)` weights stored column by column: MKL's small-batch products
    against a transposed operand run up to twice as fast (measured on AVX2), and one copy per
    forward pass is cheap next to the dozens of steps that reuse it."""
    return weights.transpose(1, 2).contiguous().transpose(1, 2)


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
        The dtype of the matrix products; see `elmo_plugin.elmo.compute_dtype`.
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
        self.graphs = LayerGraphs()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for weight in (self.input_weight, self.state_weight, self.projection_weight):
            for direction in weight:
                torch.nn.init.orthogonal_(direction.data)
        self.bias.data.zero_()
        # Forget gate bias 1 (Jozefowicz et al. 2015), as bilm-tf's forget_bias.
        self.bias.data[:, :, self.cell_size : 2 * self.cell_size] = 1.0

    def forward(
        self,
        inputs: torch.Tensor,
        batch_sizes: List[int],
        initial: Tuple[torch.Tensor, torch.Tensor],
    ) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
        """
        `inputs` is `(2, num_packed, input_size)` in `PackedBatch` order, `initial` the hidden
        `(2, batch, hidden)` and memory `(2, batch, cell)` states of the sorted batch. Returns the
        packed outputs `(2, num_packed, hidden)` and the final states of the sorted batch.
        """
        input_weight, state_weight, projection_weight = self._weights()
        step_product = self._step_product(state_weight, batch_sizes[0] if batch_sizes else 1)
        # The gate inputs (and so every step's gates) are float32: the reduced-precision product
        # is added to the bias in float32, and each step's state product to them.
        gate_inputs = _add_product(self.bias, inputs.to(input_weight.dtype), input_weight)
        hidden, memory = initial
        hidden = hidden.to(input_weight.dtype)
        outputs: List[torch.Tensor] = []
        finished: List[Tuple[torch.Tensor, torch.Tensor]] = []
        three_cells = 3 * self.cell_size
        # One split, not a slice per step: the backward pass of a slice fills a zero tensor
        # the size of all the steps, which made training quadratic in the sentence length.
        step_inputs = gate_inputs.split(batch_sizes, dim=1)
        for size, step_input in zip(batch_sizes, step_inputs):
            if size < hidden.size(1):
                finished.append((hidden[:, size:], memory[:, size:]))
                hidden, memory = hidden[:, :size], memory[:, :size]
            gates = step_product(step_input, hidden)
            gated, candidate = gates.split([three_cells, self.cell_size], dim=-1)
            input_gate, forget_gate, output_gate = torch.sigmoid(gated).chunk(3, dim=-1)
            candidate = torch.tanh(candidate)
            memory = forget_gate * memory + input_gate * candidate
            if self.cell_clip:
                memory = memory.clamp(-self.cell_clip, self.cell_clip)
            # The projection's product in the compute dtype; its output (the next step's
            # operand) stays in it too, and is clipped there (clamping rounds nothing).
            cell_output = (output_gate * torch.tanh(memory)).to(projection_weight.dtype)
            hidden = torch.bmm(cell_output, projection_weight)
            if self.proj_clip:
                hidden = hidden.clamp(-self.proj_clip, self.proj_clip)
            outputs.append(hidden)
        # Sequences finished shortest-last in the sorted batch, so the pieces go in reverse.
        final_hidden = torch.cat([hidden] + [h for h, _ in reversed(finished)], dim=1)
        final_memory = torch.cat([memory] + [m for _, m in reversed(finished)], dim=1)
        # Outputs and states in float32 (one conversion for all the steps, none in float32).
        packed = torch.cat(outputs, dim=1) if outputs else inputs.new_zeros(2, 0, self.hidden_size)
        return packed.float(), (final_hidden.float(), final_memory)

    def forward_fused(
        self,
        inputs: torch.Tensor,
        lengths: torch.Tensor,
        initial: Tuple[torch.Tensor, torch.Tensor],
        cuda_graphs: bool = False,
        running: Optional[Sequence[int]] = None,
    ) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
        """
        The layer over a dense batch, every step on every sequence, nothing read back to the
        host (`elmo_plugin.elmo.fused_lstm_layer`): `inputs` is `(2, timesteps, batch,
        input_size)`, the backward direction reversed within each sequence, `lengths` `(batch,)`
        and `initial` as in `forward`, in batch order. Returns the outputs `(2, timesteps,
        batch, hidden)` float32 (meaningful up to each length) and the final states. With
        `cuda_graphs`, the step loops of shapes that recur replay as CUDA graphs; with
        `running` (`fused_layer`'s), an inference pass skips the finished sequences' rows, in
        the input products too.
        """
        input_weight, state_weight, projection_weight = self._weights()
        _, timesteps, batch, _ = inputs.shape
        flat_inputs = inputs.reshape(2, timesteps * batch, -1).to(input_weight.dtype)
        if running is None:
            input_products = torch.bmm(flat_inputs, input_weight)
        else:
            input_products = _products_of_running_rows(flat_inputs, input_weight, running, batch)
        return fused_layer(
            input_products.view(2, timesteps, batch, -1),
            self.bias,
            state_weight,
            projection_weight,
            initial,
            lengths,
            self.cell_clip,
            self.proj_clip,
            self.graphs if cuda_graphs else None,
            running,
        )

    def _apply(self, fn, *args, **kwargs):
        # The graphs' buffers stay on the device and in the dtype they were captured in.
        self.graphs.clear()
        return super()._apply(fn, *args, **kwargs)

    def _weights(self) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The input, recurrent and projection weights in the compute dtype."""
        if self.compute_dtype == torch.float32:
            return self.input_weight, self.state_weight, self.projection_weight
        # Converted once per forward pass of the layer (and kept while frozen). No column-major
        # copy: for the bfloat16 step product it was 14% faster on torch 2.15 and 10% slower on
        # torch 1.12 (one noisy measurement each), no consistent gain.
        input_weight, state_weight, projection_weight = self._reduced.get(
            (self.input_weight, self.state_weight, self.projection_weight), self.compute_dtype
        )
        return input_weight, state_weight, projection_weight

    def _step_product(self, state_weight: torch.Tensor, rows: int) -> StepProduct:
        """The step product on `state_weight` (the parameter, or its reduced-precision copy):
        oneDNN on a packed weight where that is faster and no gradient flows
        (`elmo_plugin.elmo.packed_state_product`), else MKL's `baddbmm` on a column-major copy
        in float32, or a plain product in the reduced dtype."""
        if PackedStateProduct.applies_to(state_weight):
            self._packed_state.prepare(state_weight, rows)
            return self._packed_state.add_product
        self._packed_state.clear()  # training: the packed copy would go stale
        if state_weight.dtype == torch.float32:
            return _product_adder(_column_major(state_weight))
        return _product_adder(state_weight)


def _products_of_running_rows(
    flat_inputs: torch.Tensor, weight: torch.Tensor, running: Sequence[int], batch: int
) -> torch.Tensor:
    """`flat_inputs @ weight` `(2, timesteps * batch, out)` on the rows of the sequences still
    running at each step only (a batch sorted by length: step `t`'s first `running[t]` rows);
    the others are left unwritten, as the step loop reads none of them."""
    rows = torch.cat([torch.arange(t * batch, t * batch + n) for t, n in enumerate(running)])
    rows = rows.to(flat_inputs.device)
    products = flat_inputs.new_empty(*flat_inputs.shape[:2], weight.size(-1))
    products[:, rows] = torch.bmm(flat_inputs[:, rows], weight)
    return products


def _product_adder(weight: torch.Tensor) -> StepProduct:
    return lambda sums, hidden: _add_product(sums, hidden, weight)


def _add_product(sums: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`sums + a @ b` in `sums`' dtype (float32): one fused `baddbmm` when all three share it
    (the exact path), else the reduced-precision product added to the float32 sums."""
    if a.dtype == sums.dtype:
        return torch.baddbmm(sums, a, b)
    return plus_float32(torch.bmm(a, b), sums)


# Inference lengths are rounded up to this for CUDA graphs (`ElmoBiLstm.cuda_graphs`).
GRAPH_BUCKET = 16
# The smallest cell whose float32 inference runs sorted by length (`ElmoBiLstm.sorts_inference`).
SORTED_INFERENCE_MIN_CELL = 4096


def _reversal(lengths: torch.Tensor, timesteps: int) -> torch.Tensor:
    """`(batch, timesteps)`: the position each backward step of a dense batch reads."""
    steps = torch.arange(timesteps, device=lengths.device).unsqueeze(0)
    lengths = lengths.unsqueeze(1)
    return torch.where(steps < lengths, lengths - 1 - steps, steps)


class ElmoBiLstm(torch.nn.Module):
    """
    The contextual part of ELMo's biLM: `num_layers` layers of forward and backward LSTMs with
    projections and clipping, independent directions, and residual connections from the
    second layer on (bilm-tf's `use_skip_connections`).

    Two paths, the same function. On the CPU the batch is packed once: padding is never
    computed, both directions share each step's matrix products, and the input side of every
    gate is one matrix product per layer. On CUDA (or with `fused = True`) every step runs on
    the whole batch with nothing read back to the host, the gate math of a step fused into one
    Triton kernel (`elmo_plugin.elmo.fused_lstm_layer`); inference there may run sorted by
    length instead (`sorts_inference`). Either way the biLM runs in its own
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
        The dtype of every layer's matrix products; see `elmo_plugin.elmo.compute_dtype`.
    """

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
        # None: the fused dense path on CUDA, the packed path elsewhere (`runs_fused`).
        self.fused: Optional[bool] = None
        # The fused path's step loops replayed as CUDA graphs where shapes recur (on CUDA).
        self.cuda_graphs = False
        # None: `sorts_inference`'s rule; True or False to force it (`_forward_sorted`).
        self.sorted_inference: Optional[bool] = None

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
            if self.runs_fused(inputs):
                return self._forward_fused(inputs.float(), mask, initial_state)
            return self._forward_packed(inputs.float(), mask, initial_state)

    def runs_fused(self, inputs: torch.Tensor) -> bool:
        """Whether a batch runs on the fused dense path (`forward_fused`): `fused` when set,
        else on CUDA; the packed path serves the CPU, where padding is arithmetic it lacks."""
        return self.fused if self.fused is not None else inputs.is_cuda

    def _forward_packed(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, initial_state: LstmState
    ) -> Tuple[List[torch.Tensor], LstmState]:
        batch_size, timesteps, _ = inputs.shape
        packed = pack_batch(mask)
        hidden0 = initial_state.hidden.index_select(2, packed.sorting)
        memory0 = initial_state.memory.index_select(2, packed.sorting)

        flat_inputs = inputs.reshape(batch_size * timesteps, -1)
        layer_input = torch.stack(
            [flat_inputs[packed.forward_index], flat_inputs[packed.backward_index]]
        )
        outputs, final_hidden, final_memory = [], [], []
        for i, layer in enumerate(self.layers):
            layer_input = self.dropout(layer_input)
            output, (hidden, memory) = layer(
                layer_input, packed.batch_sizes, (hidden0[i], memory0[i])
            )
            if i > 0 and self.use_skip_connections:
                output = output + layer_input
            outputs.append(self._unpack(output, packed, batch_size, timesteps))
            final_hidden.append(hidden)
            final_memory.append(memory)
            layer_input = output
        final_state = LstmState(
            torch.stack(final_hidden).index_select(2, packed.restoration),
            torch.stack(final_memory).index_select(2, packed.restoration),
        )
        return outputs, final_state

    def _forward_fused(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, initial_state: LstmState
    ) -> Tuple[List[torch.Tensor], LstmState]:
        dense = self.cuda_graphs or self._needs_gradients(inputs, initial_state)
        if dense or not self.sorts_inference():
            return self._forward_dense(inputs, mask, initial_state)
        return self._forward_sorted(inputs, mask, initial_state)

    def sorts_inference(self) -> bool:
        """Whether an inference pass on the fused path outside CUDA graphs runs sorted by
        length (`_forward_sorted`): `sorted_inference` when set, else where it was measured to
        pay, float32 products with cells of at least `SORTED_INFERENCE_MIN_CELL`. On one H200
        (`python benchmarks/gpu_speed.py --parts sorted`, docs/performance.md) it made the
        "original" size's float32 embedding 1.16x / 1.27x faster at batch 32 / 256, and the
        "small" size's and every bfloat16 one 4-13% slower: where the products are small or on
        tensor cores, launches and the host set the pace, and the sort adds a read and
        gathers."""
        if self.sorted_inference is not None:
            return self.sorted_inference
        return self.compute_dtype == torch.float32 and self.cell_size >= SORTED_INFERENCE_MIN_CELL

    def _needs_gradients(self, inputs: torch.Tensor, initial_state: LstmState) -> bool:
        tensors = [inputs, *initial_state, *self.parameters()]
        return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)

    def _forward_sorted(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, initial_state: LstmState
    ) -> Tuple[List[torch.Tensor], LstmState]:
        """Inference on the fused path outside CUDA graphs: the batch sorted by length, so that
        each step computes only the sequences still running. Most of a dense batch is padding
        (65% of the rows at batch 256 of Wikipedia sentences, 54% at 32), and in float32 the
        per-step products, not launches, set a GPU's pace. The price is one read of the
        running counts back to the host per batch, which no gradient step pays."""
        order = sort_by_length(mask)
        running = order.running.sum(dim=1).tolist()
        sorted_state = LstmState(*(s.index_select(2, order.sorting) for s in initial_state))
        outputs, final = self._forward_dense(
            inputs.index_select(0, order.sorting),
            cast(torch.BoolTensor, mask.index_select(0, order.sorting)),
            sorted_state,
            running,
        )
        return (
            [output.index_select(0, order.restoration) for output in outputs],
            LstmState(*(s.index_select(2, order.restoration) for s in final)),
        )

    def _forward_dense(
        self,
        inputs: torch.Tensor,
        mask: torch.BoolTensor,
        initial_state: LstmState,
        running: Optional[List[int]] = None,
    ) -> Tuple[List[torch.Tensor], LstmState]:
        timesteps = inputs.size(1)
        if self.cuda_graphs and not torch.is_grad_enabled():
            # Lengths rounded up to a multiple of GRAPH_BUCKET, so that inference batch shapes
            # recur (steps past a sequence's end do not change its outputs).
            extra = -timesteps % GRAPH_BUCKET
            inputs = torch.nn.functional.pad(inputs, (0, 0, 0, extra))
            mask = cast(torch.BoolTensor, torch.nn.functional.pad(mask, (0, extra)))
        lengths = mask.sum(dim=1)
        # Step t of the backward direction reads position length - 1 - t of its sequence; past
        # its length, the padding where it is. The map is its own inverse.
        reversal = _reversal(lengths, inputs.size(1)).unsqueeze(-1)
        time_major = inputs.transpose(0, 1)
        layer_input = torch.stack(
            [time_major, inputs.gather(1, reversal.expand_as(inputs)).transpose(0, 1)]
        )
        outputs, final_hidden, final_memory = [], [], []
        padding = ~mask.unsqueeze(-1)
        for i, layer in enumerate(self.layers):
            layer_input = self.dropout(layer_input)
            output, (hidden, memory) = cast(BiLstmLayer, layer).forward_fused(
                layer_input,
                lengths,
                (initial_state.hidden[i], initial_state.memory[i]),
                self.cuda_graphs,
                running,
            )
            if i > 0 and self.use_skip_connections:
                output = output + layer_input
            forward, backward = output.transpose(1, 2)
            backward = backward.gather(1, reversal.expand_as(backward))
            both = torch.cat([forward, backward], dim=-1).masked_fill(padding, 0.0)
            outputs.append(both[:, :timesteps])
            final_hidden.append(hidden)
            final_memory.append(memory)
            layer_input = output
        return outputs, LstmState(torch.stack(final_hidden), torch.stack(final_memory))

    def _unpack(
        self, packed_output: torch.Tensor, packed: PackedBatch, batch_size: int, timesteps: int
    ) -> torch.Tensor:
        unpacked = packed_output.new_zeros(2, batch_size * timesteps, self.hidden_size)
        forward = unpacked[0].index_copy(0, packed.forward_index, packed_output[0])
        backward = unpacked[1].index_copy(0, packed.backward_index, packed_output[1])
        return torch.cat([forward, backward], dim=-1).view(batch_size, timesteps, -1)
