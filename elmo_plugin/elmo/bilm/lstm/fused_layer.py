"""
All the timesteps of one `BiLstmLayer` as one autograd function over preallocated buffers:
the GPU's path (`ElmoBiLstm` uses it on CUDA; the packed path stays the CPU's).

Why, on a GPU:
- **No synchronisation.** The packed path runs each step on the sequences still running, a
  count the host must read back from the device (one transfer and one stall per step). Here
  every step runs on the whole batch: a sequence's padding comes after its last word in both
  directions (the backward direction reads each sequence reversed in place), so the outputs at
  its words do not depend on it; the final state of each sequence is gathered at its own
  length, on the device. The steps past a sequence's end cost arithmetic, which a GPU has to
  spare, instead of launches and stalls, which it has not (except where float32 products set
  the pace: there an inference pass, which has no backward pass to queue, may take the batch
  sorted by length and each step's running count, `fused_layer`'s `running`).
- **A few launches per step.** Forward: the recurrent product, the fused gate kernel
  (`elmo_plugin.elmo.bilm.lstm.triton_gates`), the projection and its clipping; backward: two
  products, the gate kernel and the clipping mask. Autograd records one node per layer instead
  of a dozen per step, and the weights' gradients are one product each over all the steps
  (instead of one per step, summed).
- **Stored, not recomputed.** The activated gates are kept for the backward pass (float32,
  `2 x timesteps x batch x 4 * cell`: 1.3 GB per layer for 512 lanes of 20 tokens at the
  paper's size), which saves the backward pass the recurrent product and the transcendental
  functions.

The arithmetic is the packed path's: products in the compute dtype (float32 exact, or the
reduced copies of the weights), gates, memories and their gradients in float32. Equal to it to
float32 rounding, forward and backward (tests/elmo/test_fused_lstm_layer.py).
"""

from typing import NamedTuple, Optional, Sequence, Tuple

import torch

from elmo_plugin.elmo.bilm.lstm.cuda_graphs import ForwardGraph, GraphCache
from elmo_plugin.elmo.bilm.lstm.triton_gates import gates_backward, gates_forward


class LayerRun(NamedTuple):
    """The buffers of one forward pass: `hiddens` `(2, T + 1, B, hidden)` and `memories` `(2, T
    + 1, B, cell)` hold the initial state at step 0; `kept` (the activated gates) and
    `projected` (the projections before clipping) only when a backward pass will need them."""

    hiddens: torch.Tensor
    memories: torch.Tensor
    cell_outputs: torch.Tensor
    projected: Optional[torch.Tensor]
    kept: Optional[torch.Tensor]


def _run_steps(
    input_products: torch.Tensor,
    bias: torch.Tensor,
    state_weight: torch.Tensor,
    projection_weight: torch.Tensor,
    hidden0: torch.Tensor,
    memory0: torch.Tensor,
    cell_clip: Optional[float],
    proj_clip: Optional[float],
    keep: bool,
    running: Optional[Sequence[int]] = None,
) -> LayerRun:
    """The forward step loop; with `running` (lanes sorted by length, longest first: how many
    still run at each step), each step computes only those lanes' rows."""
    _, timesteps, batch, four_cells = input_products.shape
    cell, hidden_size = projection_weight.shape[1:]
    low = state_weight.dtype

    def buffer(steps: int, width: int, dtype: torch.dtype) -> torch.Tensor:
        return input_products.new_empty(2, steps, batch, width, dtype=dtype)

    hiddens = buffer(timesteps + 1, hidden_size, low)
    if running is not None:
        hiddens.zero_()  # the finished lanes' steps are not written: their outputs are zeros
    memories = buffer(timesteps + 1, cell, torch.float32)
    hiddens[:, 0] = hidden0
    memories[:, 0] = memory0
    cell_outputs = buffer(timesteps, cell, low)
    projected = buffer(timesteps, hidden_size, low) if keep and proj_clip else None
    kept = buffer(timesteps, four_cells, torch.float32) if keep else None
    for t in range(timesteps):
        lanes = slice(0, running[t] if running is not None else batch)
        if lanes.stop == 0:
            break
        product = torch.bmm(hiddens[:, t, lanes], state_weight)
        gates_forward(
            input_products[:, t, lanes],
            product,
            memories[:, t, lanes],
            memories[:, t + 1, lanes],
            cell_outputs[:, t, lanes],
            kept[:, t, lanes] if kept is not None else None,
            cell_clip,
            bias,
        )
        projection = torch.bmm(cell_outputs[:, t, lanes], projection_weight)
        if projected is not None:
            projected[:, t, lanes] = projection
        if proj_clip:
            torch.clamp(projection, -proj_clip, proj_clip, out=hiddens[:, t + 1, lanes])
        else:
            hiddens[:, t + 1, lanes] = projection
    return LayerRun(hiddens, memories, cell_outputs, projected, kept)


def _final_states(run: LayerRun, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    rows = torch.arange(lengths.size(0), device=lengths.device)
    return run.hiddens[:, lengths, rows].float(), run.memories[:, lengths, rows]


class _Backward(NamedTuple):
    """What the backward step loop gives: the gates' gradients (float32, and in the compute
    dtype for the products), the projections' and the initial state's."""

    grad_gates: torch.Tensor
    recurrent: torch.Tensor
    grad_projected: torch.Tensor
    grad_hidden0: torch.Tensor
    grad_memory0: torch.Tensor


def _backward_steps(
    run: LayerRun,
    state_weight: torch.Tensor,
    projection_weight: torch.Tensor,
    lengths: torch.Tensor,
    grad_outputs: torch.Tensor,
    grad_final_hidden: torch.Tensor,
    grad_final_memory: torch.Tensor,
    cell_clip: Optional[float],
    proj_clip: Optional[float],
) -> _Backward:
    assert run.kept is not None
    hiddens, memories, kept = run.hiddens, run.memories, run.kept
    timesteps, batch = kept.shape[1:3]
    low = state_weight.dtype
    rows = torch.arange(batch, device=lengths.device)
    # The gradient reaching each step's hidden and memory states from outside the layer: its
    # outputs, and the final state at each sequence's own length.
    grad_hiddens = torch.zeros(hiddens.shape, dtype=torch.float32, device=hiddens.device)
    grad_hiddens[:, 1:] = grad_outputs
    grad_hiddens[:, lengths, rows] += grad_final_hidden
    grad_memories = torch.zeros_like(memories)
    grad_memories[:, lengths, rows] = grad_final_memory
    inside = None
    if proj_clip:
        assert run.projected is not None
        inside = (run.projected >= -proj_clip) & (run.projected <= proj_clip)
    grad_projected = torch.empty(hiddens[:, 1:].shape, dtype=low, device=hiddens.device)
    grad_gates = torch.empty_like(kept)
    grad_gates_low = (
        torch.empty(kept.shape, dtype=low, device=kept.device) if low != torch.float32 else None
    )
    recurrent = grad_gates_low if grad_gates_low is not None else grad_gates
    state_weight_t = state_weight.transpose(1, 2)
    projection_weight_t = projection_weight.transpose(1, 2)
    for t in reversed(range(timesteps)):
        grad_hidden = grad_hiddens[:, t + 1]
        if t + 1 < timesteps:
            grad_hidden = grad_hidden + torch.bmm(recurrent[:, t + 1], state_weight_t)
        if inside is not None:
            torch.mul(grad_hidden, inside[:, t], out=grad_projected[:, t])
        else:
            grad_projected[:, t] = grad_hidden
        grad_cell_output = torch.bmm(grad_projected[:, t], projection_weight_t)
        gates_backward(
            kept[:, t],
            memories[:, t],
            grad_memories[:, t + 1],
            grad_cell_output,
            grad_gates[:, t],
            grad_gates_low[:, t] if grad_gates_low is not None else None,
            grad_memories[:, t],
            cell_clip,
        )
    grad_hidden0 = grad_hiddens[:, 0] + torch.bmm(recurrent[:, 0], state_weight_t).float()
    return _Backward(grad_gates, recurrent, grad_projected, grad_hidden0, grad_memories[:, 0])


class _FusedLayer(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx,
        input_products,
        bias,
        state_weight,
        projection_weight,
        hidden0,
        memory0,
        lengths,
        cell_clip,
        proj_clip,
        graphs,
    ):
        inputs = (input_products, bias, state_weight, projection_weight, hidden0, memory0)
        captured = _forward_graph(graphs, inputs, cell_clip, proj_clip, True) if graphs else None
        if captured is not None:
            run = captured(*inputs)
            state_weight, projection_weight = captured.inputs[2:4]
        else:
            run = _run_steps(*inputs, cell_clip, proj_clip, True)
        ctx.save_for_backward(state_weight, projection_weight, lengths, *run)
        ctx.settings = (cell_clip, proj_clip, hidden0.dtype, captured)
        outputs = run.hiddens[:, 1:].to(torch.float32, copy=True)
        return (outputs,) + _final_states(run, lengths)

    @staticmethod
    def backward(ctx, grad_outputs, grad_final_hidden, grad_final_memory):
        state_weight, projection_weight, lengths = ctx.saved_tensors[:3]
        run = LayerRun(*ctx.saved_tensors[3:])
        cell_clip, proj_clip, hidden0_dtype, captured = ctx.settings
        grads = (grad_outputs, grad_final_hidden, grad_final_memory)
        if captured is not None:
            backward = captured.backward_graph(lengths, grads)(lengths, *grads)
            captured.release()
        else:
            backward = _backward_steps(
                run, state_weight, projection_weight, lengths, *grads, cell_clip, proj_clip
            )
        grad_state_weight = torch.bmm(
            _steps_as_rows(run.hiddens[:, :-1]).transpose(1, 2), _steps_as_rows(backward.recurrent)
        )
        grad_projection_weight = torch.bmm(
            _steps_as_rows(run.cell_outputs).transpose(1, 2),
            _steps_as_rows(backward.grad_projected),
        )
        # The input products' gradient in their dtype, which the backward steps made for the
        # recurrent products anyway (no float32 block converted), and the bias's in float32.
        grad_bias = backward.grad_gates.sum(dim=(1, 2)).unsqueeze(1)
        return (
            backward.recurrent,
            grad_bias,
            grad_state_weight,
            grad_projection_weight,
            backward.grad_hidden0.to(hidden0_dtype, copy=True),
            backward.grad_memory0.clone(),
            None,
            None,
            None,
            None,
        )


def _steps_as_rows(tensor: torch.Tensor) -> torch.Tensor:
    """`(2, T, B, width)` as `(2, T * B, width)`: every step's rows in one product."""
    return tensor.reshape(2, -1, tensor.size(-1))


def fused_layer(
    input_products: torch.Tensor,
    bias: torch.Tensor,
    state_weight: torch.Tensor,
    projection_weight: torch.Tensor,
    initial: Tuple[torch.Tensor, torch.Tensor],
    lengths: torch.Tensor,
    cell_clip: Optional[float],
    proj_clip: Optional[float],
    graphs: Optional[GraphCache] = None,
    running: Optional[Sequence[int]] = None,
) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
    """
    Runs a layer over every step of a dense batch.

    # Parameters

    input_products : `torch.Tensor`
        `(2, timesteps, batch, 4 * cell)` in the compute dtype: the input product of each step,
        the backward direction's steps already reversed within each sequence. The gate kernel
        adds them to the recurrent products and `bias` in float32, so no float32 block of
        them is made, stored in a graph's inputs or converted back in the backward pass.
    bias : `torch.Tensor`
        `(2, 1, 4 * cell)` float32.
    state_weight, projection_weight : `torch.Tensor`
        `(2, hidden, 4 * cell)` and `(2, cell, hidden)` in the compute dtype.
    initial : `Tuple[torch.Tensor, torch.Tensor]`
        Hidden `(2, batch, hidden)` and memory `(2, batch, cell)` states.
    lengths : `torch.Tensor`
        `(batch,)` steps each sequence runs; its final state is the one after that many.
    graphs : `GraphCache`, optional
        This layer's CUDA graphs, to replay the step loops instead of launching them.
    running : `Sequence[int]`, optional
        For a pass that no gradient will follow, outside a graph: the batch sorted by length,
        longest first, and how many sequences still run at each step; each step then computes
        only their rows (the outputs past each length are zeros).

    # Returns

    The outputs `(2, timesteps, batch, hidden)` float32 (meaningful up to each length) and the
    final hidden and memory states.
    """
    hidden0, memory0 = initial
    differentiable = (input_products, bias, state_weight, projection_weight, hidden0, memory0)
    if torch.is_grad_enabled() and any(t.requires_grad for t in differentiable):
        outputs, hidden, memory = _FusedLayer.apply(
            *differentiable, lengths, cell_clip, proj_clip, graphs
        )
        return outputs, (hidden, memory)
    captured = (
        _forward_graph(graphs, differentiable, cell_clip, proj_clip, False) if graphs else None
    )
    if captured is not None:
        run = captured(*differentiable)
        captured.release()
        # The graph's buffers are overwritten by its next replay: the outputs are copies.
        return run.hiddens[:, 1:].to(torch.float32, copy=True), _final_states(run, lengths)
    run = _run_steps(*differentiable, cell_clip, proj_clip, False, running)
    return run.hiddens[:, 1:].float(), _final_states(run, lengths)


def _forward_graph(
    graphs: GraphCache,
    inputs: Sequence[torch.Tensor],
    cell_clip: Optional[float],
    proj_clip: Optional[float],
    keep: bool,
) -> Optional[ForwardGraph]:
    """The layer's step loop over `inputs` as a CUDA graph from `graphs`, or None (see
    `GraphCache.forward_graph`)."""

    def steps(input_products, bias, state_weight, projection_weight, hidden0, memory0):
        return _run_steps(
            input_products,
            bias,
            state_weight,
            projection_weight,
            hidden0,
            memory0,
            cell_clip,
            proj_clip,
            keep,
        )

    def backward(run, state_weight, projection_weight, lengths, outputs, hidden, memory):
        return _backward_steps(
            run,
            state_weight,
            projection_weight,
            lengths,
            outputs,
            hidden,
            memory,
            cell_clip,
            proj_clip,
        )

    return graphs.forward_graph((keep, cell_clip, proj_clip), inputs, steps, backward)
