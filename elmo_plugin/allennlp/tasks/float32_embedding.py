"""
The task models' embeddings in float32 under AMP (`trainer.use_amp`).

Why: AllenNLP's `cnn` character encoder (the `char_embedder` of every task config) masks a
convolution's windows by adding the dtype's minimum and then zeroes the pooled values equal to
it. In float16 the sum rounds to another finite value (relu output + -65504 can round to
-65472), which survives the clean-up: a padding word's character features become about
-65000, and the encoder LSTM above them overflows to NaN on the first batch. Embedding is a
small part of a task model's arithmetic, so it runs in float32 (the biLM in its own
`compute_dtype`, see `ElmoBiLstm`) and AMP keeps the encoders, attention and output layers.
"""

from typing import Any

import torch
from allennlp.data import TextFieldTensors
from allennlp.modules import TextFieldEmbedder


def _device_type(tokens: Any) -> str:
    """The device of the first tensor in nested text field tensors."""
    if isinstance(tokens, torch.Tensor):
        return tokens.device.type
    for value in tokens.values():
        found = _device_type(value)
        if found:
            return found
    return ""


def embed_in_float32(
    embedder: TextFieldEmbedder, tokens: TextFieldTensors, **kwargs: Any
) -> torch.Tensor:
    """`embedder(tokens, **kwargs)` with autocast off (float32 wherever AMP would lower it)."""
    with torch.autocast(_device_type(tokens) or "cpu", enabled=False):
        return embedder(tokens, **kwargs).float()
