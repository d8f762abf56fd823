"""
The CPU's LSTM path: the batch packed once, so that padding is never computed, both directions
share each step's matrix products, and the input side of every gate is one matrix product per
layer. Each step runs on the sequences still running (a prefix of the length-sorted batch), a
count read on the host, which costs a CPU nothing. It takes each layer's weights and step
function as arguments and knows nothing of the module (`elmo_plugin.elmo.bilm.lstm.module`).
"""

from typing import Callable, List, NamedTuple, Sequence, Tuple

import torch

from elmo_plugin.elmo.bilm.lstm.gate_math import LayerWeights, LstmState, step_gates
from elmo_plugin.elmo.bilm.lstm.packed_state_product import PackedStateProduct
from elmo_plugin.elmo.execution.compute_dtype import plus_float32

# `gates = sums + hidden @ state_weight` of one step, `(2, rows, 4 * cell)`.
StepProduct = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
# A layer on the packed path: `(inputs, batch_sizes, (hidden0, memory0))` to the packed outputs
# and the final states (`run_layer`, bound to a layer's weights).
PackedLayer = Callable[
    [torch.Tensor, List[int], Tuple[torch.Tensor, torch.Tensor]],
    Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]],
]


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
    against a transposed operand run faster (docs/performance.md has the figure), and one copy per
    forward pass is cheap next to the dozens of steps that reuse it."""
    return weights.transpose(1, 2).contiguous().transpose(1, 2)


def run_layer(
    weights: LayerWeights,
    step_product: StepProduct,
    inputs: torch.Tensor,
    batch_sizes: List[int],
    initial: Tuple[torch.Tensor, torch.Tensor],
) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
    """
    One layer in both directions: `inputs` is `(2, num_packed, input_size)` in `PackedBatch`
    order, `initial` the hidden `(2, batch, hidden)` and memory `(2, batch, cell)` states of
    the sorted batch. Returns the packed outputs `(2, num_packed, hidden)` and the final states
    of the sorted batch.
    """
    input_weight, _, bias, projection_weight, cell_clip, proj_clip = weights
    hidden_size = projection_weight.size(-1)
    # The gate inputs (and so every step's gates) are float32: the reduced-precision product
    # is added to the bias in float32, and each step's state product to them.
    gate_inputs = _add_product(bias, inputs.to(input_weight.dtype), input_weight)
    hidden, memory = initial
    hidden = hidden.to(input_weight.dtype)
    outputs: List[torch.Tensor] = []
    finished: List[Tuple[torch.Tensor, torch.Tensor]] = []
    # One split, not a slice per step: the backward pass of a slice fills a zero tensor
    # the size of all the steps, which made training quadratic in the sentence length.
    step_inputs = gate_inputs.split(batch_sizes, dim=1)
    for size, step_input in zip(batch_sizes, step_inputs):
        if size < hidden.size(1):
            finished.append((hidden[:, size:], memory[:, size:]))
            hidden, memory = hidden[:, :size], memory[:, :size]
        memory, cell_output, _, _ = step_gates(step_product(step_input, hidden), memory, cell_clip)
        # The projection's product in the compute dtype; its output (the next step's
        # operand) stays in it too, and is clipped there (clamping rounds nothing).
        hidden = torch.bmm(cell_output.to(projection_weight.dtype), projection_weight)
        if proj_clip:
            hidden = hidden.clamp(-proj_clip, proj_clip)
        outputs.append(hidden)
    # Sequences finished shortest-last in the sorted batch, so the pieces go in reverse.
    final_hidden = torch.cat([hidden] + [h for h, _ in reversed(finished)], dim=1)
    final_memory = torch.cat([memory] + [m for _, m in reversed(finished)], dim=1)
    # Outputs and states in float32 (one conversion for all the steps, none in float32).
    packed = torch.cat(outputs, dim=1) if outputs else inputs.new_zeros(2, 0, hidden_size)
    return packed.float(), (final_hidden.float(), final_memory)


def step_product(
    packed_state: PackedStateProduct, state_weight: torch.Tensor, rows: int
) -> StepProduct:
    """The step product on `state_weight` (the parameter, or its reduced-precision copy):
    oneDNN on a packed weight where that is faster and no gradient flows
    (`elmo_plugin.elmo.bilm.lstm.packed_state_product`), else MKL's `baddbmm` on a column-major copy
    in float32, or a plain product in the reduced dtype."""
    if PackedStateProduct.applies_to(state_weight):
        packed_state.prepare(state_weight, rows)
        return packed_state.add_product
    packed_state.clear()  # training: the packed copy would go stale
    if state_weight.dtype == torch.float32:
        return _product_adder(_column_major(state_weight))
    return _product_adder(state_weight)


def _product_adder(weight: torch.Tensor) -> StepProduct:
    return lambda sums, hidden: _add_product(sums, hidden, weight)


def _add_product(sums: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`sums + a @ b` in `sums`' dtype (float32): one fused `baddbmm` when all three share it
    (the exact path), else the reduced-precision product added to the float32 sums."""
    if a.dtype == sums.dtype:
        return torch.baddbmm(sums, a, b)
    return plus_float32(torch.bmm(a, b), sums)


def run_packed(
    layers: Sequence[PackedLayer],
    inputs: torch.Tensor,
    mask: torch.BoolTensor,
    initial_state: LstmState,
    dropout: Callable[[torch.Tensor], torch.Tensor],
    use_skip_connections: bool,
) -> Tuple[List[torch.Tensor], LstmState]:
    """Every layer over the packed batch (see `ElmoBiLstm.forward` for the shapes)."""
    batch_size, timesteps, _ = inputs.shape
    packed = pack_batch(mask)
    hidden0 = initial_state.hidden.index_select(2, packed.sorting)
    memory0 = initial_state.memory.index_select(2, packed.sorting)

    flat_inputs = inputs.reshape(batch_size * timesteps, -1)
    layer_input = torch.stack(
        [flat_inputs[packed.forward_index], flat_inputs[packed.backward_index]]
    )
    outputs, final_hidden, final_memory = [], [], []
    for i, layer in enumerate(layers):
        layer_input = dropout(layer_input)
        output, (hidden, memory) = layer(layer_input, packed.batch_sizes, (hidden0[i], memory0[i]))
        if i > 0 and use_skip_connections:
            output = output + layer_input
        outputs.append(_unpack(output, packed, batch_size, timesteps))
        final_hidden.append(hidden)
        final_memory.append(memory)
        layer_input = output
    final_state = LstmState(
        torch.stack(final_hidden).index_select(2, packed.restoration),
        torch.stack(final_memory).index_select(2, packed.restoration),
    )
    return outputs, final_state


def _unpack(
    packed_output: torch.Tensor, packed: PackedBatch, batch_size: int, timesteps: int
) -> torch.Tensor:
    unpacked = packed_output.new_zeros(2, batch_size * timesteps, packed_output.size(-1))
    forward = unpacked[0].index_copy(0, packed.forward_index, packed_output[0])
    backward = unpacked[1].index_copy(0, packed.backward_index, packed_output[1])
    return torch.cat([forward, backward], dim=-1).view(batch_size, timesteps, -1)
