"""
Pretraining ELMo's biLM with `allennlp train`: the `bilm_corpus` reader, the `from_corpus`
vocabulary, the `bilm` model and the export to the bilm-tf format.
"""

from elmo_plugin.allennlp.lm.corpus_vocabulary import CorpusVocabulary
from elmo_plugin.allennlp.lm.dataset_readers import BilmCorpusReader
from elmo_plugin.allennlp.lm.models import BilmLanguageModel

__all__ = ["CorpusVocabulary", "BilmCorpusReader", "BilmLanguageModel"]
