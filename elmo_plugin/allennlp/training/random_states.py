"""The states of every random generator training draws from: Python's, NumPy's and torch's
(CPU and CUDA), in a form `torch.load(weights_only=True)` reads back (tensors, tuples, ints)."""

import random
from typing import Any, Dict

import numpy
import torch

RandomStates = Dict[str, Any]


def capture() -> RandomStates:
    numpy_state = numpy.random.get_state(legacy=False)
    return {
        "python": random.getstate(),
        "numpy": {
            "key": torch.from_numpy(numpy_state["state"]["key"].astype(numpy.int64)),
            "pos": int(numpy_state["state"]["pos"]),
            "has_gauss": int(numpy_state["has_gauss"]),
            "gauss": float(numpy_state["gauss"]),
        },
        "torch": torch.get_rng_state(),
        # A process that never used CUDA drew nothing from it (and is not made to start it).
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else [],
    }


def restore(states: RandomStates) -> None:
    version, key, gauss = states["python"]
    random.setstate((version, tuple(key), gauss))
    numpy_state = states["numpy"]
    numpy.random.set_state(
        {
            "bit_generator": "MT19937",
            "state": {
                "key": numpy_state["key"].numpy().astype(numpy.uint32),
                "pos": numpy_state["pos"],
            },
            "has_gauss": numpy_state["has_gauss"],
            "gauss": numpy_state["gauss"],
        }
    )
    torch.set_rng_state(states["torch"])
    if states["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
