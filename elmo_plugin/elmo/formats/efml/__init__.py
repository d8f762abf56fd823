"""
ELMoForManyLangs (EFML) models, loaded exactly: `is_efml_directory` recognises a model
directory by its files, `load_efml_bilm` builds its biLM (an `ElmoBiLm`, `EfmlBiLm`), whose
input comes from its own `batch_to_ids`.
"""

from elmo_plugin.elmo.formats.efml.directory import DESCRIPTION, is_efml_directory
from elmo_plugin.elmo.formats.efml.ids import EfmlIds
from elmo_plugin.elmo.formats.efml.model import EfmlBiLm, load_efml_bilm, load_efml_ids

__all__ = [
    "DESCRIPTION",
    "EfmlBiLm",
    "EfmlIds",
    "is_efml_directory",
    "load_efml_bilm",
    "load_efml_ids",
]
