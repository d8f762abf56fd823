from elmo_plugin.allennlp.modules.token_embedders.elmo_token_embedder import ElmoTokenEmbedder

__all__ = ["ElmoTokenEmbedder"]
