from typing import List, Optional

import torch

from elmo_plugin.elmo.errors import ConfigurationError


class ScalarMix(torch.nn.Module):
    """
    ELMo's task-specific combination of the biLM layers (Peters et al. 2018, equation 1):
    `gamma * sum_k softmax(w)_k * h_k`, optionally layer-normalising each `h_k` over the
    unmasked positions first, and with dropout on the mixed vectors.

    The paper's `lambda * ||w||^2`, which pulls the softmax weights towards the average of the
    layers, is AllenNLP's `l2` regularizer on `scalar_parameters`, set in a model's config.

    # Parameters

    mixture_size : `int`
        Number of layers mixed (2L + 1 for ELMo).
    do_layer_norm : `bool`, optional (default = `False`)
    initial_scalar_parameters : `List[float]`, optional
        Initial (pre-softmax) layer weights; zeros, the plain average, by default.
    trainable : `bool`, optional (default = `True`)
        False keeps the layer weights and gamma fixed.
    dropout : `float`, optional (default = `0.0`)
    """

    def __init__(
        self,
        mixture_size: int,
        do_layer_norm: bool = False,
        initial_scalar_parameters: Optional[List[float]] = None,
        trainable: bool = True,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if initial_scalar_parameters is None:
            initial_scalar_parameters = [0.0] * mixture_size
        if len(initial_scalar_parameters) != mixture_size:
            raise ConfigurationError(
                f"scalar_mix_parameters has {len(initial_scalar_parameters)} values but the "
                f"biLM has {mixture_size} layers to mix"
            )
        self.mixture_size = mixture_size
        self.do_layer_norm = do_layer_norm
        self.scalar_parameters = torch.nn.Parameter(
            torch.tensor(initial_scalar_parameters, dtype=torch.float), requires_grad=trainable
        )
        self.gamma = torch.nn.Parameter(torch.tensor([1.0]), requires_grad=trainable)
        self.dropout = torch.nn.Dropout(dropout)

    def normalized_weights(self) -> torch.Tensor:
        """The softmax-normalised layer weights `s`, one per layer."""
        return torch.softmax(self.scalar_parameters, dim=0)

    def forward(
        self, tensors: List[torch.Tensor], mask: Optional[torch.BoolTensor] = None
    ) -> torch.Tensor:
        if len(tensors) != self.mixture_size:
            raise ConfigurationError(
                f"ScalarMix expects {self.mixture_size} layers, got {len(tensors)}"
            )
        if self.do_layer_norm:
            if mask is None:
                raise ValueError("ScalarMix needs the mask to layer-normalise")
            tensors = [self._layer_norm(tensor, mask) for tensor in tensors]
        weights = self.normalized_weights()
        mixed = sum(weight * tensor for weight, tensor in zip(weights, tensors))
        return self.dropout(self.gamma * mixed)

    @staticmethod
    def _layer_norm(tensor: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        broadcast_mask = mask.unsqueeze(-1).to(tensor.dtype)
        count = broadcast_mask.sum() * tensor.size(-1)
        masked = tensor * broadcast_mask
        mean = masked.sum() / count
        variance = (((masked - mean) * broadcast_mask) ** 2).sum() / count
        return (tensor - mean) / torch.sqrt(variance + _tiny_value(variance.dtype))


def _tiny_value(dtype: torch.dtype) -> float:
    """What AllenNLP's `tiny_value_of_dtype` adds to a variance before its square root, so that
    a layer-normalising mix gives AllenNLP's numbers."""
    if dtype in (torch.float32, torch.float64):
        return 1e-13
    if dtype == torch.float16:
        return 1e-4
    raise TypeError(f"a layer-normalising ScalarMix does not support {dtype}")
