from typing import Iterable, List, Optional, cast

import torch
from allennlp.training import Trainer
from overrides import overrides

from elmo_plugin.training.exact_resume import ExactResumeTrainer


def clip_gradient_norm(parameters: Iterable[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
    """`torch.nn.utils.clip_grad_norm_` (the 2-norm of all gradients together, each scaled by
    `max_norm / norm` when above it) for dense and sparse gradients alike: torch's has no norm
    of a sparse CUDA tensor. A sparse gradient is coalesced first, so that a row met twice
    counts once, summed."""
    with_gradients = [p for p in parameters if p.grad is not None]
    gradients: List[torch.Tensor] = []
    for parameter in with_gradients:
        gradient = cast(torch.Tensor, parameter.grad)
        if gradient.is_sparse:
            gradient = parameter.grad = gradient.coalesce()
        gradients.append(gradient)
    if not gradients:
        return torch.tensor(0.0)
    squares = [(g.values() if g.is_sparse else g).float().pow(2).sum() for g in gradients]
    norm = torch.stack([s.to(squares[0].device) for s in squares]).sum().sqrt()
    scale = (max_norm / (norm + 1e-6)).clamp(max=1.0)
    for gradient in gradients:
        gradient.mul_(scale.to(gradient.device, gradient.dtype))
    return norm


@Trainer.register("sparse_gradient_descent", constructor="from_partial_objects")
class SparseGradientDescentTrainer(ExactResumeTrainer):
    """
    The `exact_resume_gradient_descent` trainer (AllenNLP's `gradient_descent` with an exact
    `--recover`) whose gradient-norm clipping (`grad_norm`) also takes sparse gradients, such
    as the `bilm` model's with `sparse_softmax_gradient` (AllenNLP's calls torch's
    `clip_grad_norm_`, which has no norm of a sparse CUDA tensor and fails). With no sparse
    gradient in a step, the clipping is AllenNLP's.

    Registered as a `Trainer` with name "sparse_gradient_descent".

    # Parameters

    Those of AllenNLP's `GradientDescentTrainer`.
    """

    @overrides
    def rescale_gradients(self) -> Optional[float]:
        sparse = any(p.grad is not None and p.grad.is_sparse for p in self.model.parameters())
        if not sparse or isinstance(self._grad_norm, bool) or self._ddp_wrapped_model is not None:
            return super().rescale_gradients()
        if self._scaler is not None:
            self._scaler.unscale_(self.optimizer)
        return clip_gradient_norm(self.model.parameters(), self._grad_norm).item()
