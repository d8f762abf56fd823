"""
The names of the learned ELMo layer weights: the biLM's layers (`token`, `lstm_1`, ...) and
the metrics `elmo_layer_weight_metrics` logs them under (`_elmo_mix0_lstm_1`, ...), made and
parsed here only, so that whatever reads them back (the experiments' tables and figures)
follows the models that write them.
"""

import re
from typing import List, NamedTuple, Optional

GAMMA = "gamma"

# AllenNLP writes a model's metrics into its metrics files with these prefixes (and "_").
METRIC_PHASES = ("training", "validation", "best_validation", "test")

_METRIC_NAME = re.compile(rf"^(?:({'|'.join(METRIC_PHASES)})_)?_elmo(\d*)_mix(\d+)_(\w+)$")


class LayerWeightMetric(NamedTuple):
    """One parsed layer-weight metric name."""

    phase: Optional[str]
    """The AllenNLP phase prefix of a metrics file's key (e.g. `"training"`), None without."""
    elmo: Optional[int]
    """Which of the model's `Elmo`s, None when it holds only one."""
    mix: int
    """Which of that `Elmo`'s output representations (its scalar mixes)."""
    layer: str
    """A biLM layer name (`bilm_layer_names`) or `GAMMA`."""


def bilm_layer_names(num_lstm_layers: int) -> List[str]:
    """The names of a biLM's layers, the character encoder's first: `token`, `lstm_1`, ..."""
    return ["token"] + [f"lstm_{i + 1}" for i in range(num_lstm_layers)]


def layer_weight_metric_name(elmo: Optional[int], mix: int, layer: str) -> str:
    """
    The metric name of one learned weight, e.g. `_elmo_mix0_lstm_1` (or `_elmo1_mix0_gamma`
    when the model holds several `Elmo`s: `elmo` is then its index). The leading underscore
    keeps it off AllenNLP's progress bar.
    """
    return f"_elmo{'' if elmo is None else elmo}_mix{mix}_{layer}"


def parse_layer_weight_metric_name(name: str) -> Optional[LayerWeightMetric]:
    """
    The parts of a name `layer_weight_metric_name` makes, bare or as a key of AllenNLP's
    metrics files (`training__elmo_mix0_token`); None for any other metric.
    """
    match = _METRIC_NAME.match(name)
    if match is None:
        return None
    phase, elmo, mix, layer = match.groups()
    return LayerWeightMetric(phase, int(elmo) if elmo else None, int(mix), layer)
