"""
The gate math of one LSTM step in torch operations, written once for the torch paths: the
packed path's step loop and the reference of the Triton gate kernel
(`elmo_plugin.elmo.bilm.lstm.triton_gates`), which the fused path runs off CUDA. Gates are in the
order input, forget, output, candidate, so that one sigmoid covers three.
"""

from typing import NamedTuple, Optional

import torch


class LstmState(NamedTuple):
    """Hidden `(num_layers, 2, batch, hidden)` and memory `(num_layers, 2, batch, cell)` states;
    index 0 of the second dimension is the forward direction, 1 the backward one."""

    hidden: torch.Tensor
    memory: torch.Tensor


class LayerWeights(NamedTuple):
    """One layer's weights as the paths take them (each `(2, ...)`, the forward direction at
    index 0), the matrices in the compute dtype, the bias float32; and its clipping."""

    input_weight: torch.Tensor
    state_weight: torch.Tensor
    bias: torch.Tensor
    projection_weight: torch.Tensor
    cell_clip: Optional[float]
    proj_clip: Optional[float]


class StepGates(NamedTuple):
    memory: torch.Tensor
    cell_output: torch.Tensor
    sigmoids: torch.Tensor
    candidate: torch.Tensor


def step_gates(gates: torch.Tensor, memory: torch.Tensor, cell_clip: Optional[float]) -> StepGates:
    """From the pre-activation `gates` `(2, rows, 4 * cell)` (float32) and the previous
    `memory` `(2, rows, cell)`: the new memory, clipped, and the cell output (both float32),
    with the activated gates (the three sigmoids and the candidate's tanh)."""
    cell = memory.size(-1)
    gated, candidate = gates.split([3 * cell, cell], dim=-1)
    sigmoids = torch.sigmoid(gated)
    input_gate, forget_gate, output_gate = sigmoids.chunk(3, dim=-1)
    candidate = torch.tanh(candidate)
    memory = forget_gate * memory + input_gate * candidate
    if cell_clip:
        memory = memory.clamp(-cell_clip, cell_clip)
    return StepGates(memory, output_gate * torch.tanh(memory), sigmoids, candidate)
