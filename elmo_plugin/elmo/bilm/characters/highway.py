"""
The highway layers of ELMo's character encoder (Srivastava et al. 2015), our own rather than
AllenNLP's `Highway`, whose insides (`_layers`, `_activation`) the bfloat16 path needed: the
same parameters under the same names, the same initialisation and the same float32 numbers.
"""

from typing import Callable, List, Optional, Sequence, cast

import torch

from elmo_plugin.elmo.execution.compute_dtype import plus_float32


def biased_linear(
    inputs: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, exact: bool
) -> torch.Tensor:
    """
    `inputs @ weight.T + bias` in float32, `weight` already in the compute dtype.

    # Parameters

    inputs : `torch.Tensor`
    weight : `torch.Tensor`
    bias : `torch.Tensor`
        float32, never rounded.
    exact : `bool`
        float32 compute: one fused product with the bias. Otherwise the product runs in the
        weight's dtype and the bias is added in float32 (`plus_float32`), also where the CPU
        holds the rounded weights in float32 (`reduced_copy`).
    """
    if exact:
        return torch.nn.functional.linear(inputs, weight, bias)
    return plus_float32(torch.nn.functional.linear(inputs.to(weight.dtype), weight), bias)


class Highway(torch.nn.Module):
    """
    `num_layers` highway layers: each computes `g * x + (1 - g) * f(A x)` with the gate
    `g = sigmoid(B x)`, `A` and `B` stacked in one linear layer (`A` first), as AllenNLP's
    `Highway` does. The layers are kept under AllenNLP's name, so that the state-dict keys
    (`_layers.N.weight`, `_layers.N.bias`) of existing archives, and the biLM digests that hash
    them, stay as they were.

    # Parameters

    input_dim : `int`
    num_layers : `int`
    activation : `Callable[[torch.Tensor], torch.Tensor]`, optional (default = `relu`)
        The `f` of the nonlinear part.
    """

    def __init__(
        self,
        input_dim: int,
        num_layers: int,
        activation: Callable[[torch.Tensor], torch.Tensor] = torch.nn.functional.relu,
    ) -> None:
        super().__init__()
        self.input_dim = input_dim
        self.activation = activation
        self._layers = torch.nn.ModuleList(
            torch.nn.Linear(input_dim, 2 * input_dim) for _ in range(num_layers)
        )
        for layer in self.layers:
            # A gate bias of 1 starts each layer close to carrying its input forward.
            layer.bias.data[input_dim:].fill_(1.0)

    @property
    def layers(self) -> List[torch.nn.Linear]:
        # A `ModuleList` yields plain `Module`s to the checker; these are `Linear`s.
        return cast(List[torch.nn.Linear], list(self._layers))

    def forward(
        self, inputs: torch.Tensor, weights: Optional[Sequence[torch.Tensor]] = None
    ) -> torch.Tensor:
        """
        # Parameters

        inputs : `torch.Tensor`
            `(..., input_dim)`, float32.
        weights : `Sequence[torch.Tensor]`, optional
            Each layer's weight in a reduced compute dtype (`ReducedCopies`), its bias added in
            float32; by default the float32 weights, exactly AllenNLP's `Highway`.

        # Returns

        `(..., input_dim)`, float32: the gating is float32 in either case.
        """
        exact = weights is None
        current = inputs
        for layer, weight in zip(self.layers, weights or [each.weight for each in self.layers]):
            projected = biased_linear(current, weight, layer.bias, exact)
            nonlinear, gate = projected.chunk(2, dim=-1)
            gate = torch.sigmoid(gate)
            current = gate * current + (1 - gate) * self.activation(nonlinear)
        return current
