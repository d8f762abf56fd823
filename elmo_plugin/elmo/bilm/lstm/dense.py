"""
The GPU's LSTM path: every step on the whole dense batch, nothing read back to the host, each
layer one autograd function over preallocated buffers (`elmo_plugin.elmo.bilm.lstm.fused_layer`);
inference may run sorted by length instead, each step on the running sequences
(`run_sorted`). Like the packed path, it takes each layer's weights and graphs as arguments and
knows nothing of the module (`elmo_plugin.elmo.bilm.lstm.module`).
"""

from typing import Callable, List, Optional, Sequence, Tuple, cast

import torch

from elmo_plugin.elmo.bilm.lstm.cuda_graphs import GraphCache
from elmo_plugin.elmo.bilm.lstm.fused_layer import fused_layer
from elmo_plugin.elmo.bilm.lstm.gate_math import LayerWeights, LstmState
from elmo_plugin.elmo.bilm.lstm.packed import sort_by_length

# A layer on the dense path: `(inputs, lengths, (hidden0, memory0), running)` to the outputs
# and the final states (`run_layer`, bound to a layer's weights and graphs).
DenseLayer = Callable[
    [torch.Tensor, torch.Tensor, Tuple[torch.Tensor, torch.Tensor], Optional[Sequence[int]]],
    Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]],
]

# Inference lengths are rounded up to this for CUDA graphs (`Execution.cuda_graphs`).
GRAPH_BUCKET = 16
# The smallest cell whose float32 inference runs sorted by length (`ElmoBiLstm.sorts_inference`).
SORTED_INFERENCE_MIN_CELL = 4096


def _reversal(lengths: torch.Tensor, timesteps: int) -> torch.Tensor:
    """`(batch, timesteps)`: the position each backward step of a dense batch reads."""
    steps = torch.arange(timesteps, device=lengths.device).unsqueeze(0)
    lengths = lengths.unsqueeze(1)
    return torch.where(steps < lengths, lengths - 1 - steps, steps)


def run_layer(
    weights: LayerWeights,
    graphs: Optional[GraphCache],
    inputs: torch.Tensor,
    lengths: torch.Tensor,
    initial: Tuple[torch.Tensor, torch.Tensor],
    running: Optional[Sequence[int]] = None,
) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
    """
    One layer over a dense batch: `inputs` is `(2, timesteps, batch, input_size)`, the backward
    direction reversed within each sequence, `lengths` `(batch,)` and `initial` the hidden
    `(2, batch, hidden)` and memory `(2, batch, cell)` states, in batch order. Returns the
    outputs `(2, timesteps, batch, hidden)` float32 (meaningful up to each length) and the
    final states. With `graphs`, the step loops of shapes that recur replay as CUDA graphs;
    with `running` (`fused_layer`'s), an inference pass skips the finished sequences' rows, in
    the input products too.
    """
    input_weight, state_weight, bias, projection_weight, cell_clip, proj_clip = weights
    _, timesteps, batch, _ = inputs.shape
    flat_inputs = inputs.reshape(2, timesteps * batch, -1).to(input_weight.dtype)
    if running is None:
        input_products = torch.bmm(flat_inputs, input_weight)
    else:
        input_products = _products_of_running_rows(flat_inputs, input_weight, running, batch)
    return fused_layer(
        input_products.view(2, timesteps, batch, -1),
        bias,
        state_weight,
        projection_weight,
        initial,
        lengths,
        cell_clip,
        proj_clip,
        graphs,
        running,
    )


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


def run_sorted(
    layers: Sequence[DenseLayer],
    inputs: torch.Tensor,
    mask: torch.BoolTensor,
    initial_state: LstmState,
    dropout: Callable[[torch.Tensor], torch.Tensor],
    use_skip_connections: bool,
) -> Tuple[List[torch.Tensor], LstmState]:
    """Inference on the fused path outside CUDA graphs: the batch sorted by length, so that
    each step computes only the sequences still running. Most of a dense batch is padding, and
    in float32 the per-step products, not launches, set a GPU's pace. The price is one read of
    the running counts back to the host per batch, which no gradient step pays."""
    order = sort_by_length(mask)
    running = order.running.sum(dim=1).tolist()
    sorted_state = LstmState(*(s.index_select(2, order.sorting) for s in initial_state))
    outputs, final = run_dense(
        layers,
        inputs.index_select(0, order.sorting),
        cast(torch.BoolTensor, mask.index_select(0, order.sorting)),
        sorted_state,
        dropout,
        use_skip_connections,
        running=running,
    )
    return (
        [output.index_select(0, order.restoration) for output in outputs],
        LstmState(*(s.index_select(2, order.restoration) for s in final)),
    )


def run_dense(
    layers: Sequence[DenseLayer],
    inputs: torch.Tensor,
    mask: torch.BoolTensor,
    initial_state: LstmState,
    dropout: Callable[[torch.Tensor], torch.Tensor],
    use_skip_connections: bool,
    graph_shapes: bool = False,
    running: Optional[List[int]] = None,
) -> Tuple[List[torch.Tensor], LstmState]:
    """Every layer over the dense batch (see `ElmoBiLstm.forward` for the shapes); with
    `graph_shapes`, an inference batch's length is rounded up for CUDA graphs."""
    timesteps = inputs.size(1)
    if graph_shapes and not torch.is_grad_enabled():
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
    for i, layer in enumerate(layers):
        layer_input = dropout(layer_input)
        output, (hidden, memory) = layer(
            layer_input, lengths, (initial_state.hidden[i], initial_state.memory[i]), running
        )
        if i > 0 and use_skip_connections:
            output = output + layer_input
        forward, backward = output.transpose(1, 2)
        backward = backward.gather(1, reversal.expand_as(backward))
        both = torch.cat([forward, backward], dim=-1).masked_fill(padding, 0.0)
        outputs.append(both[:, :timesteps])
        final_hidden.append(hidden)
        final_memory.append(memory)
        layer_input = output
    return outputs, LstmState(torch.stack(final_hidden), torch.stack(final_memory))
