"""
The gradient settings of our trainers, checked where the trainer reads them: AllenNLP takes any
value and fails late (`grad_norm: null` a `TypeError` in the first step, a negative one an
`OverflowError` epochs later, after gradients flipped in sign by the negative factor).
"""

import math
from typing import Any

from elmo_plugin.elmo.errors import ConfigurationError


def check_gradient_settings(grad_norm: Any, grad_clipping: Any) -> None:
    """A `ConfigurationError` naming the key unless `trainer.grad_norm` is a positive finite
    number, true (the norm measured, not clipped) or false, and `trainer.grad_clipping` a
    positive finite number or null."""
    if not isinstance(grad_norm, bool) and not _positive_number(grad_norm):
        raise ConfigurationError(
            "trainer.grad_norm must be a positive number (the largest norm of all gradients "
            f"together), true (measure the norm only) or false (no clipping), got {grad_norm!r}"
        )
    if grad_clipping is not None and not _positive_number(grad_clipping):
        raise ConfigurationError(
            "trainer.grad_clipping must be a positive number (the largest absolute value of a "
            f"gradient element) or null (no clipping), got {grad_clipping!r}"
        )


def _positive_number(value: Any) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and math.isfinite(value) and value > 0
