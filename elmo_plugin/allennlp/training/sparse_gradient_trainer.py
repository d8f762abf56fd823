from typing import Iterable, List, Optional, cast

import torch
from allennlp.training import Trainer
from torch.cuda.amp.grad_scaler import OptState
from overrides import overrides

from elmo_plugin.allennlp.training.exact_resume import ExactResumeTrainer


def clip_gradient_norm(parameters: Iterable[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
    """`torch.nn.utils.clip_grad_norm_` (the 2-norm of all gradients together, each scaled by
    `max_norm / norm` when above it) for dense and sparse gradients alike: torch's has no norm
    of a sparse CUDA tensor. A sparse gradient is coalesced first, so that a row met twice
    counts once, summed. The dense gradients go through torch's multi-tensor
    `get_total_norm` and `clip_grads_with_norm_` where torch has them (2.6 on): a few kernel
    launches for all of them instead of four each, which a GPU step would wait on."""
    dense: List[torch.nn.Parameter] = []
    sparse: List[torch.Tensor] = []
    for parameter in parameters:
        if parameter.grad is not None and parameter.grad.is_sparse:
            parameter.grad = parameter.grad.coalesce()
            sparse.append(parameter.grad)
        elif parameter.grad is not None:
            dense.append(parameter)
    if not dense and not sparse:
        return torch.tensor(0.0)
    norms = [g.values().float().norm() for g in sparse]
    if dense:
        norms.append(_total_norm([cast(torch.Tensor, p.grad) for p in dense]))
    norm = torch.stack([n.to(norms[0].device) for n in norms]).norm()
    scale = (max_norm / (norm + 1e-6)).clamp(max=1.0)  # torch's factor, as in its clipping
    scaled_one_by_one = sparse
    if _MULTI_TENSOR_CLIPPING and dense:
        torch.nn.utils.clip_grads_with_norm_(dense, max_norm, norm)
    else:
        scaled_one_by_one = sparse + [cast(torch.Tensor, p.grad) for p in dense]
    for gradient in scaled_one_by_one:
        gradient.mul_(scale.to(gradient.device, gradient.dtype))
    return norm


def clip_gradient_values(parameters: Iterable[torch.nn.Parameter], clip_value: float) -> None:
    """`torch.nn.utils.clip_grad_value_` (every gradient element clamped to at most
    `clip_value` in absolute value) for dense and sparse gradients alike: torch's fails on a
    sparse one. A sparse gradient is coalesced first, so that a row met twice is clamped once,
    summed, as its dense gradient would be."""
    dense: List[torch.nn.Parameter] = []
    for parameter in parameters:
        if parameter.grad is not None and parameter.grad.is_sparse:
            parameter.grad = parameter.grad.coalesce()
            parameter.grad._values().clamp_(-clip_value, clip_value)
        elif parameter.grad is not None:
            dense.append(parameter)
    if dense:
        torch.nn.utils.clip_grad_value_(dense, clip_value)


_MULTI_TENSOR_CLIPPING = hasattr(torch.nn.utils, "clip_grads_with_norm_")  # torch 2.6 on


def _total_norm(gradients: List[torch.Tensor]) -> torch.Tensor:
    if _MULTI_TENSOR_CLIPPING:
        return torch.nn.utils.get_total_norm(gradients)
    return torch.stack([g.float().norm().to(gradients[0].device) for g in gradients]).norm()


@Trainer.register("sparse_gradient_descent", constructor="from_partial_objects")
class SparseGradientDescentTrainer(ExactResumeTrainer):
    """
    The `exact_resume_gradient_descent` trainer (AllenNLP's `gradient_descent` with an exact
    `--recover`) whose gradient-norm clipping (`grad_norm`) also takes sparse gradients, such
    as the `bilm` model's with `sparse_softmax_gradient` (AllenNLP's calls torch's
    `clip_grad_norm_`, which has no norm of a sparse CUDA tensor and fails), and whose
    clipping of gradient elements (`grad_clipping`) does too (AllenNLP's fails on any sparse
    gradient). With no sparse gradient in a step, the clipping is AllenNLP's.

    Registered as a `Trainer` with name "sparse_gradient_descent".

    # Parameters

    Those of AllenNLP's `GradientDescentTrainer`.
    """

    @overrides
    def rescale_gradients(self) -> Optional[float]:
        sparse = self._has_sparse_gradients()
        if not sparse or isinstance(self._grad_norm, bool) or self._ddp_wrapped_model is not None:
            return super().rescale_gradients()
        if self._scaler is not None:
            self._scaler.unscale_(self.optimizer)
        return clip_gradient_norm(self.model.parameters(), self._grad_norm).item()

    @overrides
    def clip_gradient(self) -> None:
        if self._grad_clipping is None or not self._has_sparse_gradients():
            return super().clip_gradient()
        if self._scaler is not None:  # unscaled once a step, as AllenNLP's clip_gradient does
            stage = self._scaler._per_optimizer_states[id(self.optimizer)]["stage"]
            if stage is not OptState.UNSCALED:
                self._scaler.unscale_(self.optimizer)
        clip_gradient_values(self.model.parameters(), self._grad_clipping)

    def _has_sparse_gradients(self) -> bool:
        return any(p.grad is not None and p.grad.is_sparse for p in self.model.parameters())
