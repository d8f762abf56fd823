"""
The architectures of the published ELMo biLMs (Peters et al. 2018), as bilm-tf options:
"small" is bilm-tf's `elmo_2x1024_128_2048cnn_1xhighway`, "original" its
`elmo_2x4096_512_2048cnn_2xhighway`. Benchmarks, tests and experiments build them from here;
the pretraining configs state the same in `training_configs/bilm/bilm.libsonnet` (a test
checks that the two agree).
"""

import copy
from typing import Any, Dict, List

# The character CNN of the published models: (width, number of filters), 2048 filters in all.
ELMO_FILTERS: List[List[int]] = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]

# LSTM cells, projection size and highway layers of each published model.
_SIZES = {
    "small": {"dim": 1024, "projection_dim": 128, "n_highway": 1},
    "original": {"dim": 4096, "projection_dim": 512, "n_highway": 2},
}

PUBLISHED_SIZES = tuple(_SIZES)


def published_options(size: str, n_characters: int = 262) -> Dict[str, Any]:
    """
    The bilm-tf options of the published biLM `size` ("small" or "original"), a fresh copy.

    `n_characters` is 262 as in the published `options.json` files (what bilm-tf's inference
    code wants); bilm-tf trains with 261.
    """
    if size not in _SIZES:
        raise ValueError(f"no published ELMo size {size!r}; expected one of {list(_SIZES)}")
    spec = _SIZES[size]
    return {
        "char_cnn": {
            "activation": "relu",
            "embedding": {"dim": 16},
            "filters": copy.deepcopy(ELMO_FILTERS),
            "max_characters_per_token": 50,
            "n_characters": n_characters,
            "n_highway": spec["n_highway"],
        },
        "lstm": {
            "cell_clip": 3,
            "dim": spec["dim"],
            "n_layers": 2,
            "proj_clip": 3,
            "projection_dim": spec["projection_dim"],
            "use_skip_connections": True,
        },
    }
