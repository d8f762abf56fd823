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
  spare, instead of launches and stalls, which it has not.
- **A few launches per step.** Forward: the recurrent product, the fused gate kernel
  (`elmo_plugin.elmo.lstm_gates`), the projection and its clipping; backward: two products, the
  gate kernel and the clipping mask. Autograd records one node per layer instead of a dozen per
  step, and the weights' gradients are one product each over all the steps (instead of one per
  step, summed).
- **Stored, not recomputed.** The activated gates are kept for the backward pass (float32,
  `2 x timesteps x batch x 4 * cell`: 1.3 GB per layer for 512 lanes of 20 tokens at the
  paper's size), which saves the backward pass the recurrent product and the transcendental
  functions.

The arithmetic is the packed path's: products in the compute dtype (float32 exact, or the
reduced copies of the weights), gates, memories and their gradients in float32. Equal to it to
float32 rounding, forward and backward (tests/elmo/test_fused_lstm_layer.py).
"""

from typing import List, NamedTuple, Optional, Tuple

import torch

from elmo_plugin.elmo.lstm_gates import gates_backward, gates_forward


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
    gate_inputs: torch.Tensor,
    state_weight: torch.Tensor,
    projection_weight: torch.Tensor,
    hidden0: torch.Tensor,
    memory0: torch.Tensor,
    cell_clip: Optional[float],
    proj_clip: Optional[float],
    keep: bool,
) -> LayerRun:
    _, timesteps, batch, four_cells = gate_inputs.shape
    cell, hidden_size = projection_weight.shape[1:]
    low = state_weight.dtype

    def buffer(steps: int, width: int, dtype: torch.dtype) -> torch.Tensor:
        return gate_inputs.new_empty(2, steps, batch, width, dtype=dtype)

    hiddens = buffer(timesteps + 1, hidden_size, low)
    memories = buffer(timesteps + 1, cell, torch.float32)
    hiddens[:, 0] = hidden0
    memories[:, 0] = memory0
    cell_outputs = buffer(timesteps, cell, low)
    projected = buffer(timesteps, hidden_size, low) if keep and proj_clip else None
    kept = buffer(timesteps, four_cells, torch.float32) if keep else None
    for t in range(timesteps):
        product = torch.bmm(hiddens[:, t], state_weight)
        gates_forward(
            gate_inputs[:, t],
            product,
            memories[:, t],
            memories[:, t + 1],
            cell_outputs[:, t],
            kept[:, t] if kept is not None else None,
            cell_clip,
        )
        projection = torch.bmm(cell_outputs[:, t], projection_weight)
        if projected is not None:
            projected[:, t] = projection
        if proj_clip:
            torch.clamp(projection, -proj_clip, proj_clip, out=hiddens[:, t + 1])
        else:
            hiddens[:, t + 1] = projection
    return LayerRun(hiddens, memories, cell_outputs, projected, kept)


def _final_states(run: LayerRun, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    rows = torch.arange(lengths.size(0), device=lengths.device)
    return run.hiddens[:, lengths, rows].float(), run.memories[:, lengths, rows]


class _FusedLayer(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx,
        gate_inputs,
        state_weight,
        projection_weight,
        hidden0,
        memory0,
        lengths,
        cell_clip,
        proj_clip,
    ):
        run = _run_steps(
            gate_inputs,
            state_weight,
            projection_weight,
            hidden0,
            memory0,
            cell_clip,
            proj_clip,
            True,
        )
        ctx.save_for_backward(
            state_weight,
            projection_weight,
            lengths,
            run.hiddens,
            run.memories,
            run.cell_outputs,
            run.projected,
            run.kept,
        )
        ctx.clips = (cell_clip, proj_clip)
        ctx.hidden0_dtype = hidden0.dtype
        outputs = run.hiddens[:, 1:].to(torch.float32, copy=True)
        return (outputs,) + _final_states(run, lengths)

    @staticmethod
    def backward(ctx, grad_outputs, grad_final_hidden, grad_final_memory):
        state_weight, projection_weight, lengths, hiddens, memories = ctx.saved_tensors[:5]
        cell_outputs, projected, kept = ctx.saved_tensors[5:]
        cell_clip, proj_clip = ctx.clips
        _, timesteps, batch, four_cells = kept.shape
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
            inside = (projected >= -proj_clip) & (projected <= proj_clip)
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
        grad_state_weight = torch.bmm(
            _steps_as_rows(hiddens[:, :-1]).transpose(1, 2), _steps_as_rows(recurrent)
        )
        grad_projection_weight = torch.bmm(
            _steps_as_rows(cell_outputs).transpose(1, 2), _steps_as_rows(grad_projected)
        )
        return (
            grad_gates,
            grad_state_weight,
            grad_projection_weight,
            grad_hidden0.to(ctx.hidden0_dtype),
            grad_memories[:, 0],
            None,
            None,
            None,
        )


def _steps_as_rows(tensor: torch.Tensor) -> torch.Tensor:
    """`(2, T, B, width)` as `(2, T * B, width)`: every step's rows in one product."""
    return tensor.reshape(2, -1, tensor.size(-1))


def fused_layer(
    gate_inputs: torch.Tensor,
    state_weight: torch.Tensor,
    projection_weight: torch.Tensor,
    initial: Tuple[torch.Tensor, torch.Tensor],
    lengths: torch.Tensor,
    cell_clip: Optional[float],
    proj_clip: Optional[float],
) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
    """
    Runs a layer over every step of a dense batch.

    # Parameters

    gate_inputs : `torch.Tensor`
        `(2, timesteps, batch, 4 * cell)` float32: the bias and the input product of each step,
        the backward direction's steps already reversed within each sequence.
    state_weight, projection_weight : `torch.Tensor`
        `(2, hidden, 4 * cell)` and `(2, cell, hidden)` in the compute dtype.
    initial : `Tuple[torch.Tensor, torch.Tensor]`
        Hidden `(2, batch, hidden)` and memory `(2, batch, cell)` states.
    lengths : `torch.Tensor`
        `(batch,)` steps each sequence runs; its final state is the one after that many.

    # Returns

    The outputs `(2, timesteps, batch, hidden)` float32 (meaningful up to each length) and the
    final hidden and memory states.
    """
    hidden0, memory0 = initial
    differentiable = (gate_inputs, state_weight, projection_weight, hidden0, memory0)
    if torch.is_grad_enabled() and any(t.requires_grad for t in differentiable):
        outputs, hidden, memory = _FusedLayer.apply(
            gate_inputs,
            state_weight,
            projection_weight,
            hidden0,
            memory0,
            lengths,
            cell_clip,
            proj_clip,
        )
        return outputs, (hidden, memory)
    run = _run_steps(
        gate_inputs, state_weight, projection_weight, hidden0, memory0, cell_clip, proj_clip, False
    )
    return run.hiddens[:, 1:].float(), _final_states(run, lengths)


__all__: List[str] = ["fused_layer"]
