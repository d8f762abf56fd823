"""
The token layer of an ELMoForManyLangs (EFML) biLM, EFML's `ConvTokenEmbedder`: a character
CNN (convolutions max-pooled, then the activation) and highway layers as bilm-tf's, and then,
unlike bilm-tf, the token's word embedding concatenated *before* the highway output and one
linear projection of both.
"""

from typing import Dict, List, Tuple, cast

import torch

from elmo_plugin.elmo.bilm.characters.distinct_rows import distinct_rows
from elmo_plugin.elmo.bilm.characters.encoder import (
    ACTIVATIONS,
    max_pooled_convolution,
    weight_and_bias,
    with_sentence_markers,
)
from elmo_plugin.elmo.bilm.characters.highway import Highway
from elmo_plugin.elmo.bilm.characters.token_type_cache import CachingTokenEncoder
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml.ids import WORD_ID_BITS


class EfmlTokenEncoder(CachingTokenEncoder):
    """
    Encodes the rows of `EfmlIds` (`(batch, tokens, max_characters_per_token + 2)`), adding
    `<bos>` and `<eos>` around each sentence as EFML's `read_list` does, with the interface of
    `ElmoCharacterEncoder` that `ElmoBiLm` uses: each distinct token of a batch encoded once
    (`deduplicates`), and up to `cache_size` token types remembered while frozen. float32 only.

    # Parameters

    num_characters : `int`
        Rows of the model's character table (`char.dic`).
    char_embedding_dim : `int`
    filters : `List[Tuple[int, int]]`
        `(width, number of filters)` of each convolution.
    num_highway : `int`
    projection_dim : `int`
    num_words : `int`
        Rows of the word table (`word.dic`); 0 for a model without word embeddings.
    word_embedding_dim : `int`
    max_characters_per_token : `int`
    activation : `str`
    markers : `Tuple[torch.Tensor, torch.Tensor]`
        The id rows of `<bos>` and `<eos>` (`EfmlIds.markers`).
    padding_character : `int`
        The shifted id that fills a word's row after its characters.
    cache_size : `int`, optional (default = `50000`)
    """

    compute_dtype = torch.float32

    def __init__(
        self,
        num_characters: int,
        char_embedding_dim: int,
        filters: List[Tuple[int, int]],
        num_highway: int,
        projection_dim: int,
        num_words: int,
        word_embedding_dim: int,
        max_characters_per_token: int,
        activation: str,
        markers: Tuple[torch.Tensor, torch.Tensor],
        padding_character: int,
        cache_size: int = 50000,
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ConfigurationError(
                f"token_embedder activation must be one of {sorted(ACTIVATIONS)}, got "
                f"{activation!r}"
            )
        self.max_characters_per_token = max_characters_per_token
        self.projection_dim = projection_dim
        self.cache_size = cache_size
        self.padding_character = padding_character
        self._activation = ACTIVATIONS[activation]
        self.widest_filter = max(width for width, _ in filters)
        self.padding_id = padding_character
        self.char_embedding = torch.nn.Parameter(torch.zeros(num_characters, char_embedding_dim))
        self.word_embedding = torch.nn.Parameter(torch.zeros(num_words, word_embedding_dim))
        self.convolutions = torch.nn.ModuleList(
            torch.nn.Conv1d(char_embedding_dim, num, kernel_size=width, bias=True)
            for width, num in filters
        )
        num_filters = sum(num for _, num in filters)
        self.highways = Highway(num_filters, num_highway, activation=torch.nn.functional.relu)
        self.projection = torch.nn.Linear(word_embedding_dim + num_filters, projection_dim)
        self.register_buffer("bos_ids", markers[0].clone(), persistent=False)
        self.register_buffer("eos_ids", markers[1].clone(), persistent=False)
        self.deduplicates = True

    def get_output_dim(self) -> int:
        return self.projection_dim

    def forward(self, ids: torch.Tensor) -> Dict[str, torch.Tensor]:
        """
        # Returns

        `{"token_embedding": (batch, tokens + 2, projection_dim), "mask": (batch, tokens + 2)}`,
        `<bos>` and `<eos>` added, zeros at padded positions.
        """
        if ids.dim() != 3 or ids.size(-1) != self.max_characters_per_token + 2:
            raise ConfigurationError(
                f"an ELMoForManyLangs biLM takes ids of shape (batch, tokens, "
                f"{self.max_characters_per_token + 2}) from its own batch_to_ids (characters of "
                f"its table and word ids), got {tuple(ids.shape)}: the elmo_characters "
                "indexer's ids are bilm-tf's"
            )
        mask = (ids > 0).any(dim=-1)
        marked, marked_mask = with_sentence_markers(ids, mask, *self.sentence_markers())
        return self._encode_marked(marked, marked_mask)

    def sentence_markers(self) -> Tuple[torch.Tensor, torch.Tensor]:
        """The ids of `<bos>` and `<eos>`, one row each, which `forward` adds around a sentence
        (for input to `encode_without_markers`)."""
        return cast(torch.Tensor, self.bos_ids), cast(torch.Tensor, self.eos_ids)

    def encode_without_markers(self, ids: torch.Tensor) -> Dict[str, torch.Tensor]:
        """As `forward`, but adds no `<bos>` and `<eos>`: for input that holds them where it
        needs them (the windows of a sentence longer than one run)."""
        return self._encode_marked(ids, (ids > 0).any(dim=-1))

    def _encode_marked(
        self, marked: torch.Tensor, marked_mask: torch.Tensor
    ) -> Dict[str, torch.Tensor]:
        if self.deduplicates:
            return self._encode_distinct_tokens(marked, marked_mask)
        batch, tokens, width = marked.shape
        encoded = self._encode(marked.view(-1, width).clamp(min=1), trim=False)
        embedding = encoded.view(batch, tokens, self.projection_dim) * marked_mask.unsqueeze(-1)
        return {"token_embedding": embedding, "mask": marked_mask}

    def _encode_distinct_tokens(
        self, ids: torch.Tensor, mask: torch.Tensor
    ) -> Dict[str, torch.Tensor]:
        batch, tokens, width = ids.shape
        flat_mask = mask.view(-1)
        type_ids, occurrence_to_type = distinct_rows(ids.view(-1, width)[flat_mask])
        valid = self._encode_types(type_ids)[occurrence_to_type]
        embedding = valid.new_zeros(batch * tokens, self.projection_dim)
        embedding = embedding.index_copy(0, flat_mask.nonzero().squeeze(1), valid)
        return {"token_embedding": embedding.view(batch, tokens, -1), "mask": mask}

    def _encode_types(self, type_ids: torch.Tensor) -> torch.Tensor:
        return self.cached_encoding(type_ids, self._encode)

    def _encode(self, type_ids: torch.Tensor, trim: bool = True) -> torch.Tensor:
        """The token embeddings of `(n, max_characters_per_token + 2)` id rows (no padding
        rows), EFML's `ConvTokenEmbedder.forward` for each."""
        characters = type_ids[:, : self.max_characters_per_token]
        if trim:
            characters = self.trim_padding(characters)
        embedded = torch.nn.functional.embedding(characters - 1, self.char_embedding)
        pooled = []
        for convolution in self.convolutions:
            weight, bias = weight_and_bias(convolution)
            pooled.append(self._activation(max_pooled_convolution(embedded, weight, bias)))
        highway = self.highways(torch.cat(pooled, dim=-1))
        parts = [highway]
        if self.word_embedding.size(0):
            high, low = type_ids[:, -2] - 1, type_ids[:, -1] - 1
            words = (high << WORD_ID_BITS) | low
            parts.insert(0, torch.nn.functional.embedding(words, self.word_embedding))
        return self.projection(torch.cat(parts, dim=-1))
