import math
from typing import Optional, Tuple

import numpy
import torch

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution import devices
from elmo_plugin.allennlp.lm.modules.chunked_logsumexp import chunked_logsumexp

# Accidental hits (a target drawn among its own negatives) get this logit, as in AllenNLP's
# SampledSoftmaxLoss and TensorFlow's remove_accidental_hits.
_ACCIDENTAL_HIT_LOGIT = -10000.0


def log_uniform_candidates(
    num_words: int, num_samples: int, generator: Optional[numpy.random.RandomState] = None
) -> Tuple[numpy.ndarray, int]:
    """
    Draws `num_samples` distinct classes from the log-uniform (Zipfian) distribution over
    `[0, num_words)` by sampling with replacement until that many distinct ones came up, as
    TensorFlow's `log_uniform_candidate_sampler(unique=True)` and AllenNLP's `_choice` do.
    Returns the classes, in the order first drawn, and the number of draws it took. Draws
    from `generator`, or from numpy's global random state when it is None.

    Vectorised: a buffer of draws at a time, first occurrences found with `numpy.unique`,
    instead of one Python step per draw.
    """
    rand = numpy.random.rand if generator is None else generator.rand
    log_range = math.log(num_words + 1)
    draws = numpy.empty(0, dtype=numpy.int64)
    while True:
        batch = numpy.exp(rand(2 * num_samples) * log_range).astype(numpy.int64) - 1
        draws = numpy.concatenate([draws, numpy.clip(batch, 0, num_words - 1)])
        _, first_draw = numpy.unique(draws, return_index=True)
        if len(first_draw) >= num_samples:
            first_draw.sort()
            chosen = first_draw[:num_samples]
            return draws[chosen], int(chosen[-1]) + 1


def _to_device(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A host tensor on `device`; to CUDA from pinned memory without waiting for the device
    (a copy from pageable memory waits until the GPU has done all that is queued)."""
    if not devices.copies_asynchronously(device):
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)


class SampledSoftmax(torch.nn.Module):
    """
    A softmax over a vocabulary with the sampled-softmax approximation (Jean et al. 2015) in
    training and the exact softmax in evaluation. One weight matrix serves every direction
    of a bidirectional LM, as in bilm-tf.

    In training, each call draws `num_samples` negative classes log-uniformly (so classes must
    be ordered by descending frequency), subtracts the log expected count of every class from
    its logit, and removes accidental hits; it equals AllenNLP's `SampledSoftmaxLoss` for the
    same draws. The sampled logits are reduced a chunk of rows at a time, never held whole
    (`chunked_logsumexp`: forward and backward faster than autograd's `logsumexp` over the
    whole matrix, in float32 and more so with the products in bfloat16; docs/performance.md has
    the figures).
    Evaluation scores the full vocabulary in chunks of rows so that memory stays bounded for
    large vocabularies.

    # Parameters

    num_words : `int`
        Number of classes.
    embedding_dim : `int`
        Size of the inputs.
    num_samples : `int`, optional
        Negative samples per training batch; `None` (or at least `num_words`) trains with the
        full softmax.
    max_logits_per_chunk : `int`, optional (default = `2 ** 24`)
        Bounds the `rows x num_words` logits the full softmax holds at once.
    sparse_gradient : `bool`, optional (default = `False`)
        Gives the weight a sparse gradient in training: the rows of the targets and samples
        only, instead of a dense `num_words x embedding_dim` matrix that is mostly zeros. With a
        large vocabulary the dense gradient, its norm and the optimizer's step over it dominate
        a step (the paper's 793,471 words x 512; docs/performance.md has the figures). Needs an
        optimizer that takes sparse gradients (`adagrad`, `sgd`, `sparse_adam`); for Adagrad
        the update is exactly the dense one (a row without gradient is left unchanged either
        way).
    compute_dtype : `torch.dtype`, optional (default = `torch.float32`)
        The dtype of the sampled softmax's products in training (`chunked_logsumexp`); its
        sums, the exact softmax of evaluation and the parameters stay float32.
    """

    def __init__(
        self,
        num_words: int,
        embedding_dim: int,
        num_samples: Optional[int] = None,
        max_logits_per_chunk: int = 2**24,
        sparse_gradient: bool = False,
        compute_dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        if num_words < 2:
            raise ConfigurationError(f"a softmax needs at least 2 classes, got {num_words}")
        if num_samples is not None and num_samples < 1:
            raise ConfigurationError(f"num_samples must be positive, got {num_samples}")
        self.num_words = num_words
        self.embedding_dim = embedding_dim
        self.num_samples = num_samples if num_samples and num_samples < num_words else None
        self.max_logits_per_chunk = max_logits_per_chunk
        self.sparse_gradient = sparse_gradient
        self.weight = torch.nn.Parameter(
            torch.randn(num_words, embedding_dim) / math.sqrt(embedding_dim)
        )
        self.bias = torch.nn.Parameter(torch.zeros(num_words))
        self._log_range = math.log(num_words + 1)
        self.compute_dtype = compute_dtype

    def forward(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        # Parameters

        embeddings : `torch.Tensor`
            `(num_predictions, embedding_dim)`.
        targets : `torch.Tensor`
            `(num_predictions,)` classes in `[0, num_words)`.

        # Returns

        The negative log-likelihood of each target, `(num_predictions,)`.
        """
        if self.training and self.num_samples is not None:
            return self._sampled_nll(embeddings, targets, self.num_samples)
        return self._full_nll(embeddings, targets)

    def _full_nll(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        rows_per_chunk = max(1, self.max_logits_per_chunk // self.num_words)
        pieces = []
        for start in range(0, embeddings.size(0), rows_per_chunk):
            chunk = embeddings[start : start + rows_per_chunk]
            logits = torch.nn.functional.linear(chunk, self.weight, self.bias)
            pieces.append(
                torch.nn.functional.cross_entropy(
                    logits, targets[start : start + rows_per_chunk], reduction="none"
                )
            )
        return torch.cat(pieces) if pieces else embeddings.new_zeros(0)

    def _sampled_nll(
        self, embeddings: torch.Tensor, targets: torch.Tensor, num_samples: int
    ) -> torch.Tensor:
        sampled, num_tries = log_uniform_candidates(self.num_words, num_samples)
        sampled_ids = _to_device(torch.from_numpy(sampled), targets.device)
        true_logits = (
            (self._rows(targets) * embeddings).sum(dim=1)
            + self.bias[targets]
            - self.log_expected_count(targets, num_tries)
        )
        # The log expected counts go into the bias: one subtraction per sample, not per logit.
        # Accidental hits get _ACCIDENTAL_HIT_LOGIT, whose gradient through the softmax,
        # exp(-10000), is zero, as when masking inside autograd.
        sampled_lse = chunked_logsumexp(
            embeddings,
            self._rows(sampled_ids),
            self.bias[sampled_ids] - self.log_expected_count(sampled_ids, num_tries),
            masked=(targets, sampled_ids),
            mask_value=_ACCIDENTAL_HIT_LOGIT,
            dtype=self.compute_dtype,
        )
        # -log_softmax([true, sampled...])[0], without building the concatenation.
        return torch.logaddexp(true_logits, sampled_lse) - true_logits

    def _rows(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.embedding(ids, self.weight, sparse=self.sparse_gradient)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs) -> None:
        stored = state_dict.get(prefix + "weight")
        if stored is not None and tuple(stored.shape) != tuple(self.weight.shape):
            raise ConfigurationError(
                f"the saved softmax has {stored.shape[0]} words of dimension {stored.shape[1]}, "
                f"but this model's vocabulary has {self.num_words} (and dimension "
                f"{self.embedding_dim}): the vocabulary does not belong to these weights"
            )
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def log_expected_count(self, ids: torch.Tensor, num_tries: int) -> torch.Tensor:
        """log of how often `num_tries` log-uniform draws are expected to give each class."""
        ids = ids.to(self.weight.dtype)
        probability = torch.log((ids + 2.0) / (ids + 1.0)) / self._log_range
        expected = -torch.expm1(num_tries * torch.log1p(-probability))
        return torch.log(expected + torch.finfo(expected.dtype).tiny)
