from typing import Dict

import torch

from elmo_plugin.elmo.elmo import Elmo


def elmo_layer_weight_metrics(model: torch.nn.Module) -> Dict[str, float]:
    """
    The learned ELMo layer weights of every `Elmo` inside `model`, as flat metrics a model's
    `get_metrics` can return (AllenNLP logs them each epoch, so they can be plotted), e.g.
    `_elmo_mix0_lstm_2: 0.41` and `_elmo_mix0_gamma: 1.3`. Leading underscores keep them
    off the progress bar.
    """
    metrics: Dict[str, float] = {}
    elmos = [module for module in model.modules() if isinstance(module, Elmo)]
    for e, elmo in enumerate(elmos):
        prefix = "_elmo" if len(elmos) == 1 else f"_elmo{e}"
        names = elmo.bilm.layer_names()
        for m, mix in enumerate(elmo.scalar_mixes):
            for name, weight in zip(names, mix.normalized_weights().tolist()):
                metrics[f"{prefix}_mix{m}_{name}"] = weight
            metrics[f"{prefix}_mix{m}_gamma"] = float(mix.gamma.detach())
    return metrics
