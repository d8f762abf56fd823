"""
The ELMo core: the character ids of words (a fast `batch_to_ids`), the character encoder,
the biLM LSTM, the scalar mix, the bilm-tf weight format, the biLM loader, the activation
cache, the `Elmo` module and the `elmo` token embedder. It imports nothing else of
`elmo_plugin`.
"""

from elmo_plugin.elmo.activation_cache import ActivationCache
from elmo_plugin.elmo.bilm import ElmoBiLm
from elmo_plugin.elmo.bilm_lstm import ElmoBiLstm, LstmState
from elmo_plugin.elmo.bilm_loading import load_bilm
from elmo_plugin.elmo.bilm_tf_format import read_options, save_bilm
from elmo_plugin.elmo.character_encoder import ElmoCharacterEncoder
from elmo_plugin.elmo.character_ids import CharacterIdTable, batch_to_ids
from elmo_plugin.elmo.elmo import ELMO_INDEXER_KEY, Elmo
from elmo_plugin.elmo.elmo_token_embedder import ElmoTokenEmbedder
from elmo_plugin.elmo.layer_weight_names import (
    LayerWeightMetric,
    bilm_layer_names,
    layer_weight_metric_name,
    parse_layer_weight_metric_name,
)
from elmo_plugin.elmo.layer_weights import elmo_layer_weight_metrics
from elmo_plugin.elmo.layer_weights_callback import ElmoLayerWeightsCallback
from elmo_plugin.elmo.scalar_mix import ScalarMix

__all__ = [
    "ActivationCache",
    "ElmoBiLm",
    "ElmoBiLstm",
    "LstmState",
    "load_bilm",
    "read_options",
    "save_bilm",
    "ElmoCharacterEncoder",
    "CharacterIdTable",
    "batch_to_ids",
    "ELMO_INDEXER_KEY",
    "Elmo",
    "ElmoTokenEmbedder",
    "LayerWeightMetric",
    "bilm_layer_names",
    "layer_weight_metric_name",
    "parse_layer_weight_metric_name",
    "elmo_layer_weight_metrics",
    "ElmoLayerWeightsCallback",
    "ScalarMix",
]
