"""
Named entity recognition on CoNLL-2003 (the ELMo paper's NER task): the reader
"conll2003_ner", the "bilstm_crf_tagger" model and the "conll_ner" predictor.
"""

from elmo_plugin.allennlp.tasks.ner.dataset_readers import Conll2003NerReader
from elmo_plugin.allennlp.tasks.ner.models import BiLstmCrfTagger
from elmo_plugin.allennlp.tasks.ner.predictors import ConllNerPredictor

__all__ = ["Conll2003NerReader", "BiLstmCrfTagger", "ConllNerPredictor"]
