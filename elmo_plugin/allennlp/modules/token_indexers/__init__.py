from elmo_plugin.allennlp.modules.token_indexers.efml_characters_indexer import (
    EfmlCharactersIndexer,
)

__all__ = ["EfmlCharactersIndexer"]
