"""
Semantic role labelling (the ELMo paper's SRL task): the readers "universal_propbank_srl"
(Universal PropBank CoNLL-U+, span or head labels) and "conll_srl_columns" (CoNLL-2005/2012
bracketed columns), the He et al. (2017) "deep_srl" model, the "dependency_srl_f1" metric
and the "deep_srl" predictor.
"""

from elmo_plugin.allennlp.tasks.srl.dataset_readers import (
    ConllSrlColumnsReader,
    UniversalPropbankSrlReader,
)
from elmo_plugin.allennlp.tasks.srl.metrics import DependencySrlF1
from elmo_plugin.allennlp.tasks.srl.models import DeepSrl
from elmo_plugin.allennlp.tasks.srl.predictors import DeepSrlPredictor

__all__ = [
    "ConllSrlColumnsReader",
    "UniversalPropbankSrlReader",
    "DependencySrlF1",
    "DeepSrl",
    "DeepSrlPredictor",
]
