from typing import Dict

import torch

from elmo_plugin.elmo.bilm.layer_names import GAMMA, layer_weight_metric_name
from elmo_plugin.elmo.modules.elmo import Elmo


def elmo_layer_weight_metrics(model: torch.nn.Module) -> Dict[str, float]:
    """
    The learned ELMo layer weights of every `Elmo` inside `model` (an `elmo` token embedder's
    too), as flat metrics a model's `get_metrics` can return (AllenNLP logs them each epoch, so
    they can be plotted), e.g. `_elmo_mix0_lstm_2: 0.41` and `_elmo_mix0_gamma: 1.3`; the
    names are `layer_weight_metric_name`'s. This is the one public way to read the weights.
    """
    metrics: Dict[str, float] = {}
    elmos = [module for module in model.modules() if isinstance(module, Elmo)]
    for e, elmo in enumerate(elmos):
        index = None if len(elmos) == 1 else e
        names = elmo.bilm.layer_names()
        for m, mix in enumerate(elmo.scalar_mixes):
            for name, weight in zip(names, mix.normalized_weights().tolist()):
                metrics[layer_weight_metric_name(index, m, name)] = weight
            metrics[layer_weight_metric_name(index, m, GAMMA)] = float(mix.gamma.detach())
    return metrics
