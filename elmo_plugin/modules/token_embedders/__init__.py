from elmo_plugin.modules.token_embedders.elmo_token_embedder import ElmoTokenEmbedder

__all__ = ["ElmoTokenEmbedder"]
