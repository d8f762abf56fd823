import math
from typing import Dict

import torch
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric

# What `get_metric` returns: each direction's perplexity, then both directions together.
PERPLEXITY_NAMES = ("forward_perplexity", "backward_perplexity", "perplexity")


class TokenPerplexity(Metric):
    """
    Perplexity of a bidirectional language model per direction, weighted by tokens:
    `exp(total negative log-likelihood / number of predicted tokens)` over everything seen
    since the last reset (not an average over batches), summed across distributed workers.

    `get_metric` returns `forward_perplexity`, `backward_perplexity` and `perplexity`, the
    exponential of the mean negative log-likelihood of both directions together.
    """

    def __init__(self) -> None:
        self._totals = torch.zeros(4, dtype=torch.float64)

    # AllenNLP's `Metric.__call__` takes (predictions, gold_labels, mask) tensors; this one takes
    # the two directions' losses: the override cannot match its signature.
    def __call__(  # type: ignore[override]
        self, forward_nll: torch.Tensor, backward_nll: torch.Tensor
    ) -> None:
        """`forward_nll` and `backward_nll` hold the negative log-likelihood of each predicted
        token of one direction."""
        # Summed where the losses are: no device-to-host copy per batch, and NCCL reduces
        # CUDA tensors only.
        forward_nll, backward_nll = forward_nll.detach().double(), backward_nll.detach().double()
        batch = torch.stack(
            [
                forward_nll.sum(),
                forward_nll.new_tensor(forward_nll.numel()),
                backward_nll.sum(),
                backward_nll.new_tensor(backward_nll.numel()),
            ]
        )
        self._totals = self._totals.to(batch.device) + dist_reduce_sum(batch)

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        forward_nll, forward_count, backward_nll, backward_count = self._totals.tolist()
        values = [
            _perplexity(forward_nll, forward_count),
            _perplexity(backward_nll, backward_count),
            _perplexity(forward_nll + backward_nll, forward_count + backward_count),
        ]
        metrics = dict(zip(PERPLEXITY_NAMES, values))
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._totals = torch.zeros(4, dtype=torch.float64)


def _perplexity(total_nll: float, count: float) -> float:
    return math.exp(total_nll / count) if count > 0 else 0.0
