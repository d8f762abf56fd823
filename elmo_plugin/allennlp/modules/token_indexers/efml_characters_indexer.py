from typing import Dict, List

import torch
from allennlp.common.util import pad_sequence_to_length
from allennlp.data.token_indexers.token_indexer import IndexedTokenList, TokenIndexer
from allennlp.data.tokenizers import Token
from allennlp.data.vocabulary import Vocabulary
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml import load_efml_ids
from elmo_plugin.elmo.formats.naming.bilm_formats import EFML
from elmo_plugin.elmo.formats.naming.names import is_gone, resolve_bilm
from elmo_plugin.elmo.formats.options_record import efml_model_gone
from elmo_plugin.elmo.modules.bilm_inputs import EFML_INDEXER_NAME, EFML_TABLES, EFML_TOKENS


@TokenIndexer.register(EFML_INDEXER_NAME)
class EfmlCharactersIndexer(TokenIndexer):
    """
    The input of an ELMoForManyLangs (EFML) model, for the `elmo` token embedder whose biLM is
    that model: each token's character ids in the model's own table and its word id
    (`elmo_plugin.elmo.formats.efml.EfmlIds`, as EFML's `Embedder` makes them), where a bilm-tf
    biLM takes the `elmo_characters` indexer's. Give both the same model:

        "token_indexers": {"elmo": {"type": "elmo_efml_characters", "model": "/m/efml/en"}}
        "token_embedders": {"elmo": {"type": "elmo", "options_file": "/m/efml/en", ...}}

    (`elmo.libsonnet`'s `efml(model)` writes both.) Its ids are under the key `efml_tokens`
    (not the `elmo_characters` indexer's `elmo_tokens`, so that the embedder knows whose ids it
    got), and the digest of the model's tables under `efml_tables`, which the embedder checks
    against its biLM's: a different model is an error, not silently wrong ids.

    Registered as a `TokenIndexer` with name "elmo_efml_characters".

    # Parameters

    model : `str`
        The EFML model: its folder, or any name of it that the `elmo` embedder's
        `options_file` takes (`elmo_plugin.elmo.formats.naming.names`). Only its tables and its
        architecture JSON are read.
    token_min_padding_length : `int`, optional (default = `0`)
        See `TokenIndexer`.
    """

    def __init__(self, model: str, token_min_padding_length: int = 0) -> None:
        super().__init__(token_min_padding_length)
        files = resolve_bilm(model, None, what="model")
        if files.format != EFML:
            if is_gone(files.options_file):
                raise efml_model_gone(model, f'the "{EFML_INDEXER_NAME}" indexer\'s model')
            raise ConfigurationError(
                f'the "{EFML_INDEXER_NAME}" indexer\'s model {model!r} is no {EFML} model (its '
                f'format: {files.format}): index its tokens with "elmo_characters"'
            )
        self._ids = load_efml_ids(files.options_file)

    @overrides
    def count_vocab_items(self, token: Token, counter: Dict[str, Dict[str, int]]) -> None:
        pass  # the model's tables are fixed

    @overrides
    def get_empty_token_list(self) -> IndexedTokenList:
        return {EFML_TOKENS: [], EFML_TABLES: [self._ids.digest]}

    @overrides
    def tokens_to_indices(self, tokens: List[Token], vocabulary: Vocabulary) -> IndexedTokenList:
        return {
            EFML_TOKENS: [self._ids.token_row(token.ensure_text()).tolist() for token in tokens],
            EFML_TABLES: [self._ids.digest],
        }

    @overrides
    def as_padded_tensor_dict(
        self, tokens: IndexedTokenList, padding_lengths: Dict[str, int]
    ) -> Dict[str, torch.Tensor]:
        width = self._ids.width
        padded = pad_sequence_to_length(
            tokens[EFML_TOKENS], padding_lengths[EFML_TOKENS], default_value=lambda: [0] * width
        )
        # The ids first, and the digest 3-dimensional as they are: AllenNLP's
        # `get_text_field_mask` takes the first of a field's tensors of the fewest dimensions.
        tables = torch.LongTensor([tokens[EFML_TABLES]])  # (1, 1), batched (batch_size, 1, 1)
        return {EFML_TOKENS: torch.LongTensor(padded), EFML_TABLES: tables}
