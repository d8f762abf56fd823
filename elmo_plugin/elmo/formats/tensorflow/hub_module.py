"""
TF1 Hub modules of ELMo (TF-Hub's `google/elmo`, DeepPavlov's Russian modules): a folder with
`tfhub_module.pb` and `variables/variables.{index,data-*}`, a TensorFlow checkpoint holding
bilm-tf's inference graph's variables under `bilm/...` and the module's learned mix of the
layers, `aggregation/weights` (pre-softmax, one a layer) and `aggregation/scaling`. The sizes
come from the tensors' shapes; the constants that live in the graph (`saved_model.pb`: the
clipping, the activation, the longest token, the skip connections) are not read from it:
bilm-tf's published values are used, and said so in the log.
"""

import logging
import re
from typing import Any, Dict, List, Optional, Tuple

import numpy
import torch

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.settings import Execution
from elmo_plugin.elmo.formats.bilm_tf import checked_weight, copy_weights
from elmo_plugin.elmo.formats.bilm_tf_options import check_options
from elmo_plugin.elmo.formats.naming.bilm_formats import (
    BILM_FOLDER_FORMATS,
    HUB_VARIABLES_PREFIX,
    TF_HUB,
)
from elmo_plugin.elmo.formats.tensorflow.checkpoint import Checkpoint
from elmo_plugin.elmo.files.zip_archives import is_file, is_folder

logger = logging.getLogger(__name__)

REQUIRED_FILES = BILM_FOLDER_FORMATS[TF_HUB]
AGGREGATION_WEIGHTS, AGGREGATION_SCALING = "aggregation/weights", "aggregation/scaling"
# What bilm-tf's published biLMs set in the graph, which a module's variables do not say.
PUBLISHED_GRAPH_CONSTANTS: Dict[str, Dict[str, Any]] = {
    "char_cnn": {"activation": "relu", "max_characters_per_token": 50},
    "lstm": {"cell_clip": 3, "proj_clip": 3, "use_skip_connections": True},
}
_SCOPE = "bilm/"
# bilm-tf's inference graph's names for the LSTM, and the hdf5 names they come from.
_LSTM = re.compile(
    r"^(RNN_\d+/RNN/MultiRNNCell/Cell\d+)/rnn/lstm_cell/(kernel|bias|projection/kernel)$"
)
_LSTM_HDF5 = {"kernel": "W_0", "bias": "B", "projection/kernel": "W_P_0"}
_BILM_VARIABLE = re.compile(
    r"^(char_embed|CNN(_high_\d+|_proj)?/\w+"
    r"|RNN_\d+/RNN/MultiRNNCell/Cell\d+/(rnn/lstm_cell/(kernel|bias|projection/kernel)"
    r"|LSTMCell/(W_0|B|W_P_0)))$"
)


def is_hub_module(name: str) -> bool:
    """Whether `name` is a folder holding a TF1 Hub module (`REQUIRED_FILES`)."""
    return is_folder(name) and all(is_file(f"{name}/{file}") for file in REQUIRED_FILES)


def hdf5_name(variable: str) -> str:
    """bilm-tf's hdf5 name of the module's `bilm/...` `variable`."""
    name = variable[len(_SCOPE) :]
    match = _LSTM.match(name)
    return f"{match.group(1)}/LSTMCell/{_LSTM_HDF5[match.group(2)]}" if match else name


class HubWeights:
    """The biLM tensors of a module's variables, under bilm-tf's hdf5 names (`WeightSource`);
    the character table loses the zero row that bilm-tf's graph puts in front of it."""

    def __init__(self, checkpoint: Checkpoint) -> None:
        self.checkpoint = checkpoint
        self.weight_file = checkpoint.prefix
        self._variables = {
            hdf5_name(name): name
            for name in checkpoint.names()
            if name.startswith(_SCOPE) and _BILM_VARIABLE.match(name[len(_SCOPE) :])
        }

    def names(self) -> List[str]:
        return sorted(self._variables)

    def shape(self, name: str) -> Tuple[int, ...]:
        shape = self.checkpoint.shape(self._variable(name))
        return (shape[0] - 1, *shape[1:]) if name == "char_embed" else shape

    def rows(self, name: str) -> Optional[int]:
        return self.shape(name)[0] if name in self._variables else None

    def read(self, name: str, expected_shape: Tuple[int, ...]) -> numpy.ndarray:
        value = numpy.array(self.checkpoint.tensor(self._variable(name)))
        if name == "char_embed":
            if value.shape[0] < 1 or value[0].any():
                raise ConfigurationError(
                    f"{self.weight_file}: 'bilm/char_embed' does not start with bilm-tf's zero "
                    "row for masked tokens; is this module bilm-tf's graph?"
                )
            value = value[1:]
        return checked_weight(value, self.weight_file, self._variable(name), expected_shape)

    def _variable(self, name: str) -> str:
        if name not in self._variables:
            raise ConfigurationError(
                f"{self.weight_file}: the module holds no biLM variable for bilm-tf's {name!r} "
                f"(its biLM variables are under '{_SCOPE}')"
            )
        return self._variables[name]


def module_options(weights: HubWeights) -> Dict[str, Any]:
    """The biLM's options, its sizes read from the variables' shapes."""
    names = weights.names()
    filters = []
    for number in range(sum(1 for name in names if re.match(r"^CNN/W_cnn_\d+$", name))):
        _, width, _, count = weights.shape(f"CNN/W_cnn_{number}")
        filters.append([width, count])
    cell = "RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell"
    dim = weights.shape(f"{cell}/W_0")[1] // 4
    options = {
        "char_cnn": {
            "embedding": {"dim": weights.shape("char_embed")[1]},
            "filters": filters,
            "n_highway": sum(1 for name in names if name.endswith("/W_carry")),
            "n_characters": weights.shape("char_embed")[0] + 1,
            **PUBLISHED_GRAPH_CONSTANTS["char_cnn"],
        },
        "lstm": {
            "dim": dim,
            "projection_dim": weights.shape(f"{cell}/W_P_0")[1],
            "n_layers": sum(
                1 for name in names if re.match(r"^RNN_0/.*/Cell\d+/LSTMCell/W_0$", name)
            ),
            **PUBLISHED_GRAPH_CONSTANTS["lstm"],
        },
    }
    logger.info(
        "%s: sizes read from the variables; the graph's constants are bilm-tf's published "
        "values, not read from saved_model.pb: %s",
        weights.weight_file,
        PUBLISHED_GRAPH_CONSTANTS,
    )
    return check_options(options, f"{weights.weight_file} (options from the variables' shapes)")


def load_hub_bilm(
    folder: str,
    stateful: bool = False,
    char_cnn_cache_size: int = 50000,
    dropout: float = 0.0,
    compute_dtype: torch.dtype = torch.float32,
    execution: Execution = Execution(),
) -> ElmoBiLm:
    """The biLM of the TF1 Hub module `folder`."""
    weights = HubWeights(Checkpoint(f"{folder.rstrip('/')}/{HUB_VARIABLES_PREFIX}"))
    bilm = ElmoBiLm.from_options(
        module_options(weights),
        stateful,
        char_cnn_cache_size,
        dropout,
        compute_dtype=compute_dtype,
        execution=execution,
    )
    copy_weights(bilm, weights)
    return bilm


def module_aggregation(folder: str) -> Tuple[numpy.ndarray, float]:
    """The module's mix of the layers: its pre-softmax weights, one a layer, and its scale."""
    checkpoint = Checkpoint(f"{folder.rstrip('/')}/{HUB_VARIABLES_PREFIX}")
    for name in (AGGREGATION_WEIGHTS, AGGREGATION_SCALING):
        if name not in checkpoint:
            raise ConfigurationError(
                f"{checkpoint.index_file}: the module has no {name}, so no 'elmo' mix"
            )
    return numpy.array(checkpoint.tensor(AGGREGATION_WEIGHTS)), float(
        checkpoint.tensor(AGGREGATION_SCALING)
    )


def module_outputs(
    bilm: ElmoBiLm, aggregation: Tuple[numpy.ndarray, float], character_ids: torch.Tensor
) -> Dict[str, torch.Tensor]:
    """The module's outputs for `character_ids` (without the sentence markers): `word_emb`,
    `lstm_outputs1`, `lstm_outputs2`, `elmo` (the softmax of the aggregation weights over the
    layers, scaled) and `default` (the mean of `elmo` over each sentence's words)."""
    weights, scaling = aggregation
    if len(weights) != bilm.num_layers:
        raise ConfigurationError(
            f"the module's aggregation has {len(weights)} weights for {bilm.num_layers} layers"
        )
    output = bilm(character_ids)
    mask = output["mask"][:, 2:].unsqueeze(-1).float()  # a word there, not a marker or padding
    layers = [layer[:, 1:-1] * mask for layer in output["activations"]]
    mix = torch.softmax(torch.as_tensor(weights, dtype=layers[0].dtype), dim=0)
    elmo = scaling * sum(weight * layer for weight, layer in zip(mix, layers))
    found = {
        "word_emb": layers[0][..., : layers[0].shape[-1] // 2],
        "elmo": elmo,
        "default": elmo.sum(dim=1) / mask.sum(dim=1).clamp(min=1),
    }
    found.update({f"lstm_outputs{number}": layers[number] for number in range(1, len(layers))})
    return found
