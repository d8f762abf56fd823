import math
from typing import Dict, Optional

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
    # the two directions' losses and their counts, in the same three places.
    def __call__(
        self,
        forward_nll: torch.Tensor,
        backward_nll: torch.Tensor,
        counts: Optional[torch.Tensor] = None,
    ) -> None:
        """`forward_nll` and `backward_nll` hold the negative log-likelihood of each predicted
        token of one direction; with `counts` (forward, backward), they may hold zeros for
        positions that are not predictions, and `counts` says how many are."""
        # Summed where the losses are: no device-to-host copy per batch, and NCCL reduces
        # CUDA tensors only.
        forward_nll, backward_nll = forward_nll.detach().double(), backward_nll.detach().double()
        if counts is None:
            counts = torch.tensor([forward_nll.numel(), backward_nll.numel()])
        counts = counts.to(device=forward_nll.device, dtype=torch.float64)
        batch = torch.stack([forward_nll.sum(), counts[0], backward_nll.sum(), counts[1]])
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
