from elmo_plugin.lm.models.bilm_language_model import BilmLanguageModel

__all__ = ["BilmLanguageModel"]
