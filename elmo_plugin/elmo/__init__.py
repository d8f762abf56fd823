"""
The ELMo core, which needs torch, numpy and h5py and nothing of AllenNLP, in six rooms, each
importing only those before it: the one error (`errors`), writing and reading files safely
(`files`: atomic writes, file sets, ZIP members read in place, weight files that cannot run
code), how the biLM runs (`execution`), the biLM itself (`bilm`: the character ids and encoder,
the LSTM and its execution paths, and `ElmoBiLm`), the formats' readers and writers, the names
of biLMs and their downloads (`formats`), and the `Elmo` module, the scalar mix, the activation
cache and the layer weights (`modules`). It imports
nothing else of `elmo_plugin`; the AllenNLP plugin layer (`elmo_plugin.allennlp.modules`,
`elmo_plugin.allennlp.training`, the commands, `lm` and the tasks) builds on it.
"""

from elmo_plugin.elmo.bilm.characters.encoder import ElmoCharacterEncoder
from elmo_plugin.elmo.bilm.characters.ids import CharacterIdTable, batch_to_ids
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.settings import Execution
from elmo_plugin.elmo.formats.bilm_tf_options import read_options
from elmo_plugin.elmo.formats.exports import save_bilm
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.elmo.bilm.lstm.module import ElmoBiLstm, LstmState
from elmo_plugin.elmo.modules.activation_cache import ActivationCache
from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.modules.elmo import ELMO_INDEXER_KEY, Elmo
from elmo_plugin.elmo.bilm.layer_names import (
    LayerWeightMetric,
    bilm_layer_names,
    layer_weight_metric_name,
    parse_layer_weight_metric_name,
)
from elmo_plugin.elmo.modules.layer_weights import elmo_layer_weight_metrics
from elmo_plugin.elmo.modules.scalar_mix import ScalarMix

__all__ = [
    "ActivationCache",
    "CharacterIdTable",
    "ConfigurationError",
    "ELMO_INDEXER_KEY",
    "Elmo",
    "ElmoBiLm",
    "ElmoBiLstm",
    "ElmoCharacterEncoder",
    "Execution",
    "LayerWeightMetric",
    "LstmState",
    "ScalarMix",
    "batch_to_ids",
    "bilm_layer_names",
    "elmo_layer_weight_metrics",
    "layer_weight_metric_name",
    "load_bilm",
    "parse_layer_weight_metric_name",
    "read_options",
    "save_bilm",
]
