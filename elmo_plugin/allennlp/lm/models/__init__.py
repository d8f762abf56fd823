from elmo_plugin.allennlp.lm.models.bilm_language_model import BilmLanguageModel

__all__ = ["BilmLanguageModel"]
