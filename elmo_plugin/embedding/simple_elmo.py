"""
simple_elmo's API (`ElmoModel`), opt-in, for code written for it (DeLFT vendors it; the
rusvectores service calls it) that lost TensorFlow: change the import to
`from elmo_plugin.embedding.simple_elmo import ElmoModel`. The outputs are simple_elmo's
(simple-elmo 0.9.2), computed by elmo_plugin: bilm-tf's biLM keeps each batch row's LSTM states
from one batch to the next, and its `warmup` runs the first batch once before the others, so a
sentence's vectors depend on what ran before it in the same row; the `"average"` mix weighs
the three layers equally; positions past a sentence's end hold what bilm-tf's graph leaves
there (the token layer of an empty token, zeros in the LSTM layers), which
`get_elmo_vector_average` sums over the batch's longest sentence before normalising, as
simple_elmo does. Any biLM that elmo_plugin names loads, not only NLPL's ZIPs and folders.
"""

from typing import Any, Dict, List, Optional, Sequence

import numpy
import torch

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.tensorflow.language_model import CheckpointLanguageModel
from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder
from elmo_plugin.embedding.states import CARRIED

LAYER_CHOICES = ("average", "top", "all")
LOADED = "The model is now loaded."


class ElmoModel:
    """simple_elmo's `ElmoModel`: `load`, then `get_elmo_vectors`, `get_elmo_vector_average`
    or (loaded with `full=True`, from a training checkpoint) `get_elmo_substitutes`."""

    def __init__(self) -> None:
        self.batch_size = 0
        self.vector_size = 0
        self.n_layers = 0
        self._embedder: Optional[ElmoEmbedder] = None
        self._language_model: Optional[CheckpointLanguageModel] = None

    def load(
        self, directory: str, max_batch_size: int = 32, limit: int = 100, full: bool = False
    ) -> str:
        """
        Loads the biLM `directory` names (a folder, a ZIP, any name elmo_plugin takes).
        `max_batch_size`: the sentences of one batch (bilm-tf's rows of carried states).
        `limit`: accepted for simple_elmo's callers; it only sized simple_elmo's cache of
        character ids. `full`: a training checkpoint with its softmax, for substitutes.
        """
        if not isinstance(max_batch_size, int) or max_batch_size < 1:
            raise ConfigurationError(
                f"max_batch_size must be a positive integer, got {max_batch_size!r}"
            )
        self.batch_size = max_batch_size
        if full:
            self._language_model = CheckpointLanguageModel(str(directory))
            self._embedder = ElmoEmbedder.from_bilm(self._language_model.bilm, state=CARRIED)
        else:
            self._embedder = ElmoEmbedder(directory, state=CARRIED)
        self.vector_size = self._embedder.get_output_dim()
        self.n_layers = self._embedder.num_layers
        return LOADED

    def get_elmo_vectors(
        self,
        texts: Sequence[Sequence[str]],
        warmup: bool = True,
        layers: str = "average",
        session: Any = None,
    ) -> numpy.ndarray:
        """The vectors of every word: `(len(texts), longest, dim)`, or with `layers="all"`
        `(len(texts), L + 1, longest, dim)`; zeros past each batch's longest sentence."""
        longest = max((len(text) for text in texts), default=0)
        shape = (len(texts), self.n_layers, longest) if layers == "all" else (len(texts), longest)
        found = numpy.zeros((*shape, self.vector_size))
        for start, mixed in self._batches(texts, warmup, layers, session):
            found[start : start + len(mixed), ..., : mixed.shape[-2], :] = mixed
        return found

    def get_elmo_vector_average(
        self,
        texts: Sequence[Sequence[str]],
        warmup: bool = True,
        layers: str = "average",
        session: Any = None,
    ) -> numpy.ndarray:
        """Each sentence's vector: the mean over its batch's positions, of unit length."""
        if layers == "all":
            raise ConfigurationError(
                'get_elmo_vector_average: layers="all" is refused: simple_elmo reshapes the '
                "layers without transposing them, mixing words and layers; average each layer "
                'of get_elmo_vectors(texts, layers="all") instead'
            )
        found = numpy.zeros((len(texts), self.vector_size))
        for start, mixed in self._batches(texts, warmup, layers, session):
            summed = mixed.sum(axis=-2) / mixed.shape[-2]
            found[start : start + len(mixed)] = summed / numpy.linalg.norm(
                summed, axis=-1, keepdims=True
            )
        return found

    def get_elmo_substitutes(
        self, data: Sequence[str], topn: int = 3, nodelimiters: bool = True
    ) -> List[List[Dict[str, Any]]]:
        """simple_elmo's substitutes for each word of each sentence (`data`, whitespace-
        tokenised strings): `CheckpointLanguageModel.substitutes`."""
        if self._language_model is None:
            raise ConfigurationError(
                "get_elmo_substitutes needs the softmax: load a training checkpoint with "
                "full=True"
            )
        return self._language_model.substitutes(
            [sentence.split() for sentence in data], topn, nodelimiters
        )

    def _batches(self, texts: Sequence[Sequence[str]], warmup: bool, layers: str, session: Any):
        embedder = self._loaded()
        if layers not in LAYER_CHOICES:
            raise ConfigurationError(f"layers must be one of {LAYER_CHOICES}, got {layers!r}")
        if session is not None:
            raise ConfigurationError("session: a TensorFlow session has no use here; leave it out")
        embedder.reset_states()  # simple_elmo starts each call from a new session's states
        if warmup and texts:
            self._layers(texts[: self.batch_size])
        for start in range(0, len(texts), self.batch_size):
            stacked = self._layers(texts[start : start + self.batch_size])
            if layers == "average":  # simple_elmo's weights: softmax of equal values
                stacked = stacked.mean(axis=1)
            elif layers == "top":
                stacked = stacked[:, -1]
            yield start, stacked

    def _layers(self, batch: Sequence[Sequence[str]]) -> numpy.ndarray:
        """`(len(batch), L + 1, longest, dim)`, past each sentence's end what bilm-tf leaves."""
        embedder = self._loaded()
        embedded = embedder.embed_batch([list(sentence) for sentence in batch])
        longest = max(len(sentence) for sentence in batch)
        stacked = numpy.zeros((len(batch), self.n_layers, longest, self.vector_size))
        stacked[:, 0] = self._empty_token()
        for row, layers in enumerate(embedded):
            stacked[row, :, : layers.shape[1]] = layers
        return stacked

    def _empty_token(self) -> numpy.ndarray:
        """The token layer of a position past the end: bilm-tf encodes its all-zero character
        ids as a token."""
        encoder = self._loaded().elmo_bilm.character_encoder
        with torch.no_grad():
            ids = torch.zeros(1, encoder.max_characters_per_token, dtype=torch.long)
            encoded = encoder.encode_token_types(ids.to(encoder.char_embedding.device))[0]
        return torch.cat([encoded, encoded]).float().cpu().numpy()

    def _loaded(self) -> ElmoEmbedder:
        if self._embedder is None:
            raise ConfigurationError("no model loaded: call load(directory) first")
        return self._embedder
