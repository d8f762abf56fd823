"""
The AllenNLP-facing ELMo modules, over the core (`elmo_plugin.elmo`): `Elmo` buildable from a
config, and the `elmo` token embedder.
"""

from elmo_plugin.modules.elmo import Elmo
from elmo_plugin.modules.token_embedders import ElmoTokenEmbedder

__all__ = ["Elmo", "ElmoTokenEmbedder"]
