"""
One vector a sentence instead of one a token, as the published ELMo tools give it: `mean`
averages the tokens of the layers `--output-format` picked, and the presets follow each tool's
own definition, on a sentence's `(L + 1, num_tokens, dim)` layers (the token layer first):

- `tfhub-default`: TF-Hub's ELMo module, output `default`, "a fixed mean-pooling of all
  contextualized word representations": the mean over the tokens of its `elmo` output, the
  layers' weighted sum, whose weights the module holds at their start (bilm-tf's
  `weight_layers`: softmax of zeros, gamma 1), i.e. the mean of the layers.
- `simple-elmo-average`: simple_elmo's `get_elmo_vector_average` with its default
  `layers="average"`: the sum over the tokens of the layers' mean, divided by a length, then
  scaled to unit L2 norm (the division cancels in the norm).
- `seqvec-protein`: SeqVec's per-protein vector (`embedding.sum(0).mean(0)`, and
  bio_embeddings' `reduce_per_protein` for SeqVec): the layers' sum, averaged over residues.

A sentence of no tokens has no mean: its vector is NaN, as each tool's 0 / 0 gives.
"""

from typing import Callable, Dict, Tuple

import numpy

from elmo_plugin.elmo.errors import ConfigurationError

NO_POOL = "none"
MEAN = "mean"


def _mean_of_tokens(stacked: numpy.ndarray) -> numpy.ndarray:
    """The mean over the token axis (the second to last), NaN for no tokens."""
    if stacked.shape[-2] == 0:
        return numpy.full(stacked.shape[:-2] + stacked.shape[-1:], numpy.nan, stacked.dtype)
    return stacked.mean(axis=-2)


def _unit_length(vector: numpy.ndarray) -> numpy.ndarray:
    with numpy.errstate(invalid="ignore", divide="ignore"):
        return vector / numpy.linalg.norm(vector)


# What each preset makes of a sentence's `(L + 1, num_tokens, dim)` layers.
PRESETS: Dict[str, Callable[[numpy.ndarray], numpy.ndarray]] = {
    "tfhub-default": lambda layers: _mean_of_tokens(layers.mean(axis=0)),
    "simple-elmo-average": lambda layers: _unit_length(_mean_of_tokens(layers.mean(axis=0))),
    "seqvec-protein": lambda layers: _mean_of_tokens(layers.sum(axis=0)),
}
POOL_CHOICES: Tuple[str, ...] = (NO_POOL, MEAN, *PRESETS)


def check_pool(pool: str, output_format: str) -> None:
    """A known pool; a preset, which picks its layers itself, only with all the layers."""
    if pool not in POOL_CHOICES:
        raise ConfigurationError(f"pool must be one of {POOL_CHOICES}, got {pool!r}")
    if pool in PRESETS and output_format != "all":
        raise ConfigurationError(
            f"pool {pool!r} combines the layers by its own definition: leave output_format "
            f"at 'all', not {output_format!r} (or use pool 'mean' over the {output_format!r} "
            "layer)"
        )


def pool_layers(layers: numpy.ndarray, formatted: numpy.ndarray, pool: str) -> numpy.ndarray:
    """A sentence's vectors under `pool`: from its `(L + 1, num_tokens, dim)` `layers` for a
    preset, else from `formatted` (those `output_format` picked) for `mean` and `none`."""
    if pool in PRESETS:
        return PRESETS[pool](layers)
    if pool == MEAN:
        return _mean_of_tokens(formatted)
    return formatted


def is_pooled(pool: str) -> bool:
    return pool != NO_POOL
