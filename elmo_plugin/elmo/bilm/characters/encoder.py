from typing import Callable, Dict, List, Optional, Sequence, Tuple, cast

import torch

from elmo_plugin.elmo.bilm.characters.distinct_rows import distinct_rows
from elmo_plugin.elmo.bilm.characters.highway import Highway, biased_linear
from elmo_plugin.elmo.bilm.characters.ids import (
    BEGINNING_OF_SENTENCE_CHARACTERS,
    END_OF_SENTENCE_CHARACTERS,
    MAX_WORD_LENGTH,
    PADDING_CHARACTER,
)
from elmo_plugin.elmo.bilm.characters.token_type_cache import CachingTokenEncoder
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution import devices
from elmo_plugin.elmo.execution.compute_dtype import ReducedCopies, plus_float32

ACTIVATIONS: Dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": torch.nn.functional.relu,
    "tanh": torch.tanh,
}


def weight_and_bias(layer: torch.nn.Module) -> Tuple[torch.Tensor, torch.Tensor]:
    """A convolution's or linear layer's weight and bias. Every layer of the encoder has a bias;
    torch types a layer taken from a `ModuleList` as a plain `Module`, and `Conv1d.bias` as
    optional, so the checker needs telling."""
    return cast(torch.Tensor, layer.weight), cast(torch.Tensor, layer.bias)


def max_pooled_convolution(
    embedded: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None
) -> torch.Tensor:
    """
    `conv1d` of the `(tokens, positions, dim)` character embeddings with a `(filters, dim,
    width)` weight, max-pooled over the positions: `(tokens, filters)`.

    Run as a 2-d convolution of height 1 in channels-last memory (where the embeddings already
    are), max-pooled by `max_over_positions`: on the CPU the same values, bit for bit, and the
    published CNN's forward and backward passes faster, in float32 and more so in bfloat16,
    than `conv1d`'s channels-first output reduced by `max(dim=-1)`, a reduction over a short
    innermost dimension whose backward scatter was the character CNN's largest cost in
    training. On a GPU channels-first `conv1d` was slower too (benchmarks/gpu_speed.py's
    `variants`; docs/performance.md has the figures).
    """
    images = embedded.transpose(1, 2).unsqueeze(2).contiguous(memory_format=torch.channels_last)
    kernels = weight.unsqueeze(2).contiguous(memory_format=torch.channels_last)
    features = torch.nn.functional.conv2d(images, kernels, bias)
    return max_over_positions(features)


def max_over_positions(features: torch.Tensor) -> torch.Tensor:
    """
    The `(tokens, filters)` maxima of `(tokens, filters, 1, positions)` channels-last features.

    The CPU uses `adaptive_max_pool2d` (above). On CUDA its kernels take one thread a
    (token, filter) looping over the positions, and their backward scatters with atomics: a
    visible share of a training step of the paper's biLM for little data read
    (docs/performance.md has the figures). `max(dim)` over the positions reduces along the
    filters in contiguous memory, and its backward writes each position's gradient once.
    """
    if devices.pools_by_max_over_dim(features):
        return features.flatten(2).max(dim=-1).values
    return torch.nn.functional.adaptive_max_pool2d(features, 1).flatten(1)


def _biased_pooling(
    embedded: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, exact: bool
) -> torch.Tensor:
    """`max_pooled_convolution` plus the bias: inside the convolution in float32 (exact), else
    added in float32 after the pooling, which a constant per filter commutes with."""
    if exact:
        return max_pooled_convolution(embedded, weight, bias)
    return plus_float32(max_pooled_convolution(embedded, weight), bias)


# The indexer shifts every character id by one so that 0 can be padding.
_PADDING_CHARACTER_ID = PADDING_CHARACTER + 1


def with_sentence_markers(
    character_ids: torch.Tensor, mask: torch.Tensor, begin: torch.Tensor, end: torch.Tensor
) -> Tuple[torch.Tensor, torch.Tensor]:
    """`(batch, tokens, characters)` ids with `begin` before each sentence and `end` after it,
    `(batch, tokens + 2, characters)`, and their mask: AllenNLP's
    `add_sentence_boundary_token_ids`, with no read of the lengths back to the host."""
    batch, tokens, characters = character_ids.shape
    marked = character_ids.new_zeros(batch, tokens + 2, characters)
    marked[:, 1:-1] = character_ids
    marked[:, 0] = begin
    rows = torch.arange(batch, device=character_ids.device)
    marked[rows, mask.sum(dim=1) + 1] = end.to(marked.dtype)
    return marked, marked.sum(dim=-1) > 0


def _boundary_character_ids(characters: Sequence[int]) -> torch.Tensor:
    return torch.tensor(characters, dtype=torch.long) + 1


class ElmoCharacterEncoder(CachingTokenEncoder):
    """
    The context-insensitive token encoder of ELMo: character embeddings, a CNN with several
    filter widths and max-pooling over characters, highway layers and a linear projection.

    Input is the output of AllenNLP's `elmo_characters` token indexer, `(batch, tokens, 50)`.
    The sentence markers `<S>` and `</S>` are added here, as bilm-tf and AllenNLP do
    (`encode_without_markers` encodes input that already holds them).

    Unlike AllenNLP's encoder, the CNN runs once per distinct token of a batch (padding is
    never encoded), and, while the encoder is frozen, once per distinct token ever seen:
    up to `cache_size` token types are remembered across batches. Finding the distinct tokens
    reads counts back from the device; with `deduplicates = False` (`Execution.deduplicates`,
    set by the biLM) the CNN runs at every position instead and nothing is read back (for a
    GPU step that should not wait on the device).

    # Parameters

    char_embedding_dim : `int`
        Size of each character embedding.
    filters : `List[Tuple[int, int]]`
        `(width, number of filters)` for each convolution.
    num_highway : `int`
        Number of highway layers after the CNN.
    projection_dim : `int`
        Output size of the token representation.
    num_characters : `int`, optional (default = `262`)
        Size of the character vocabulary without the padding row (bilm-tf's `n_characters`,
        261 or 262).
    max_characters_per_token : `int`, optional (default = `50`)
    activation : `str`, optional (default = `"relu"`)
        Applied to the pooled CNN features, `"relu"` or `"tanh"`.
    cache_size : `int`, optional (default = `50000`)
        Number of token types whose encodings are memoised while the encoder is frozen;
        0 disables the cache.
    compute_dtype : `torch.dtype`, optional (default = `torch.float32`)
        The dtype of the convolutions and the linear layers (float32 is exact); see
        `elmo_plugin.elmo.execution.compute_dtype`.
    """

    def __init__(
        self,
        char_embedding_dim: int,
        filters: List[Tuple[int, int]],
        num_highway: int,
        projection_dim: int,
        num_characters: int = 262,
        max_characters_per_token: int = 50,
        activation: str = "relu",
        cache_size: int = 50000,
        compute_dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ConfigurationError(
                f"char_cnn activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}"
            )
        if max_characters_per_token != MAX_WORD_LENGTH:
            raise ConfigurationError(
                f"max_characters_per_token must be {MAX_WORD_LENGTH} "
                f"(the elmo_characters indexer's), got {max_characters_per_token}"
            )
        self.char_embedding_dim = char_embedding_dim
        self.filters = [tuple(f) for f in filters]
        self.num_highway = num_highway
        self.projection_dim = projection_dim
        self.num_characters = num_characters
        self.max_characters_per_token = max_characters_per_token
        self.activation = activation
        self.cache_size = cache_size
        self._activation = ACTIVATIONS[activation]
        self.widest_filter = max(width for width, _ in self.filters)
        self.padding_id = _PADDING_CHARACTER_ID

        # Row 0 is the padding character; rows 1.. are bilm-tf's characters.
        self.char_embedding = torch.nn.Parameter(
            torch.empty(num_characters + 1, char_embedding_dim).uniform_(-1.0, 1.0)
        )
        self.convolutions = torch.nn.ModuleList(
            torch.nn.Conv1d(char_embedding_dim, num, kernel_size=width, bias=True)
            for width, num in self.filters
        )
        num_filters = sum(num for _, num in self.filters)
        self.highways = Highway(num_filters, num_highway, activation=torch.nn.functional.relu)
        self.projection = torch.nn.Linear(num_filters, projection_dim, bias=True)

        self.register_buffer(
            "bos_characters",
            _boundary_character_ids(BEGINNING_OF_SENTENCE_CHARACTERS),
            persistent=False,
        )
        self.register_buffer(
            "eos_characters",
            _boundary_character_ids(END_OF_SENTENCE_CHARACTERS),
            persistent=False,
        )
        self.compute_dtype = compute_dtype
        self._reduced = ReducedCopies()
        # Whether the CNN runs once per distinct token of a batch (the default) or at every
        # position: up to several times the work, but nothing read back to the host, so a GPU
        # step need not wait for its count of distinct tokens (`_encode_every_token`).
        self.deduplicates = True

    def get_output_dim(self) -> int:
        return self.projection_dim

    def forward(self, character_ids: torch.Tensor) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        character_ids : `torch.Tensor`
            `(batch_size, num_tokens, 50)` ids from the `elmo_characters` indexer.

        # Returns

        `{"token_embedding": (batch_size, num_tokens + 2, projection_dim), "mask": (batch_size,
        num_tokens + 2)}`, with `<S>` and `</S>` added and zeros at padded positions.
        """
        # A bool tensor, which torch's stubs type as a plain Tensor.
        mask = cast(torch.BoolTensor, (character_ids > 0).any(dim=-1))
        ids_with_boundaries, mask_with_boundaries = with_sentence_markers(
            character_ids,
            mask,
            cast(torch.Tensor, self.bos_characters),
            cast(torch.Tensor, self.eos_characters),
        )
        return self._encode_tokens(ids_with_boundaries, mask_with_boundaries)

    def sentence_markers(self) -> Tuple[torch.Tensor, torch.Tensor]:
        """The ids of `<S>` and `</S>`, one row each, which `forward` adds around a sentence
        (for input to `encode_without_markers`)."""
        return cast(torch.Tensor, self.bos_characters), cast(torch.Tensor, self.eos_characters)

    def encode_without_markers(self, character_ids: torch.Tensor) -> Dict[str, torch.Tensor]:
        """
        As `forward`, but adds no `<S>` and `</S>`: for input that already holds them where
        it needs them (the windows of a packed corpus, cut from a stream of sentences).

        # Returns

        `{"token_embedding": (batch_size, num_tokens, projection_dim), "mask": (batch_size,
        num_tokens)}`, zeros at padded positions.
        """
        return self._encode_tokens(character_ids, (character_ids > 0).any(dim=-1))

    def _encode_tokens(
        self, character_ids: torch.Tensor, mask: torch.Tensor
    ) -> Dict[str, torch.Tensor]:
        """Encodes each distinct unmasked token of the batch once, in the compute dtype even
        under AMP's autocast (which would make the products float16)."""
        with torch.autocast(character_ids.device.type, enabled=False):
            if self.deduplicates:
                return self._encode_distinct_tokens(character_ids, mask)
            return self._encode_every_token(character_ids, mask)

    def _encode_distinct_tokens(
        self, character_ids: torch.Tensor, mask: torch.Tensor
    ) -> Dict[str, torch.Tensor]:
        batch_size, num_tokens, _ = character_ids.shape
        flat_mask = mask.view(-1)
        valid_ids = character_ids.view(-1, self.max_characters_per_token)[flat_mask]
        type_ids, occurrence_to_type = distinct_rows(valid_ids)
        valid_embeddings = self.encode_token_types(type_ids)[occurrence_to_type]

        token_embedding = valid_embeddings.new_zeros(batch_size * num_tokens, self.projection_dim)
        token_embedding = token_embedding.index_copy(
            0, flat_mask.nonzero().squeeze(1), valid_embeddings
        )
        return {
            "token_embedding": token_embedding.view(batch_size, num_tokens, self.projection_dim),
            "mask": mask,
        }

    def _encode_every_token(
        self, character_ids: torch.Tensor, mask: torch.Tensor
    ) -> Dict[str, torch.Tensor]:
        """Encodes every position, padding included, untrimmed and uncached: each shortcut of
        `_encode_distinct_tokens` (the selection of real tokens, the distinct rows, the trim,
        the scatter back) needs a count read back from the device."""
        batch_size, num_tokens, num_characters = character_ids.shape
        encoded = self._encode(character_ids.view(-1, num_characters), trim=False)
        token_embedding = encoded.view(batch_size, num_tokens, self.projection_dim)
        return {"token_embedding": token_embedding * mask.unsqueeze(-1), "mask": mask}

    def encode_token_types(self, type_ids: torch.Tensor) -> torch.Tensor:
        """Encodes `(num_types, 50)` distinct character-id rows, through the cache when frozen."""
        return self.cached_encoding(type_ids, self._encode)

    def _encode(self, type_ids: torch.Tensor, trim: bool = True) -> torch.Tensor:
        """The encodings of `(num_types, 50)` character-id rows, float32: the convolutions and
        the linear layers in the compute dtype, on weights cast once per call (and kept while
        frozen), their biases added in float32, the highway gating float32. `trim`: only as
        many character positions as the longest row needs (`trim_padding`)."""
        if trim:
            type_ids = self.trim_padding(type_ids)
        exact = self.compute_dtype == torch.float32
        char_embedding, convolution_weights, highway_weights, projection_weight = self._weights()
        embedded = torch.nn.functional.embedding(type_ids, char_embedding)
        pooled = []
        for convolution, weight in zip(self.convolutions, convolution_weights):
            _, bias = weight_and_bias(convolution)
            pooled.append(self._activation(_biased_pooling(embedded, weight, bias, exact)))
        current = self.highways(torch.cat(pooled, dim=-1), None if exact else highway_weights)
        return biased_linear(current, projection_weight, self.projection.bias, exact)

    def _weights(
        self,
    ) -> Tuple[torch.Tensor, List[torch.Tensor], List[torch.Tensor], torch.Tensor]:
        """The character embedding, the convolutions', the highway layers' and the projection's
        weights in the compute dtype: the parameters themselves in float32."""
        convolutions = [weight_and_bias(convolution)[0] for convolution in self.convolutions]
        highways = [layer.weight for layer in self.highways.layers]
        weights = [self.char_embedding] + convolutions + highways + [self.projection.weight]
        if self.compute_dtype != torch.float32:
            weights = self._reduced.get(weights, self.compute_dtype)
        split = len(convolutions) + 1
        return weights[0], weights[1:split], weights[split:-1], weights[-1]
