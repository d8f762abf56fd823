"""
The AllenNLP-facing ELMo modules, over the core (`elmo_plugin.elmo`): `Elmo` buildable from a
config, the `elmo` token embedder, and the `elmo_efml_characters` indexer of ELMoForManyLangs
models.
"""

from elmo_plugin.allennlp.modules.elmo import Elmo
from elmo_plugin.allennlp.modules.token_embedders import ElmoTokenEmbedder
from elmo_plugin.allennlp.modules.token_indexers import EfmlCharactersIndexer

__all__ = ["EfmlCharactersIndexer", "Elmo", "ElmoTokenEmbedder"]
