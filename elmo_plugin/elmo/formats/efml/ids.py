"""
The input of an ELMoForManyLangs (EFML) biLM: for each token its character ids in the model's
own table and its word id, made as EFML's `Embedder` makes them (`read_list` and
`create_one_batch` of elmoformanylangs 0.0.4.post2), in one integer tensor so that the biLM
takes one input as a bilm-tf one does:

`(batch, tokens, max_characters_per_token + 2)`: the character ids, then the word id in two
columns (its high and low `WORD_ID_BITS`); every value shifted by one so that 0 is padding, and
every value below 2**15, as the character-type and activation caches' int16 keys need.
"""

import hashlib
import json
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
import torch

from elmo_plugin.elmo.errors import ConfigurationError

# The registered name of the AllenNLP token indexer that makes these ids (in the plugin).
EFML_INDEXER_NAME = "elmo_efml_characters"
SENTENCE_MARKERS = ("<bos>", "<eos>")
# EFML's special entries: `<oov>` for what the table lacks, `<pad>` after a word's characters.
OOV, PAD = "<oov>", "<pad>"
# EFML writes a word's characters between these two, swapped: the one it reads as `<bow>` is the
# table's `<eow>` and the other way round (`create_one_batch`). Kept, since the weights learnt it.
WORD_START, WORD_END = "<eow>", "<bow>"
WORD_ID_BITS = 14
# Shifted by one, an id column holds at most 2**15 - 1.
_LARGEST_CHARACTER_ID = 2**15 - 2
_LARGEST_WORD_ID = 2 ** (15 + WORD_ID_BITS) - 2
# Token rows remembered before the memo starts afresh (a bound on its memory).
_MAX_REMEMBERED = 200_000
# The bytes of a table digest kept: an int64 that stays positive.
_DIGEST_BYTES = 7
# The model folder of every table digest loaded in this process, for errors that name it.
_SOURCES: Dict[int, str] = {}


class EfmlIds:
    """
    Makes an EFML biLM's input from tokenised sentences.

    # Parameters

    characters : `Dict[str, int]`
        The model's `char.dic`.
    words : `Dict[str, int]`, optional
        The model's `word.dic`, for a model with word embeddings.
    max_characters_per_token : `int`
        The architecture's: longer tokens are cut to this many minus two characters, for their
        characters and their word id alike, as EFML's `read_list` cuts them.
    source : `str`, optional
        The model's folder, which errors about ids of other tables name.
    """

    def __init__(
        self,
        characters: Dict[str, int],
        words: Optional[Dict[str, int]],
        max_characters_per_token: int,
        source: str = "an ELMoForManyLangs model",
    ) -> None:
        required = SENTENCE_MARKERS + (OOV, PAD, WORD_START, WORD_END)
        _check_table(characters, "char.dic", required, _LARGEST_CHARACTER_ID)
        if words is not None:
            _check_table(words, "word.dic", (OOV, PAD), _LARGEST_WORD_ID)
        if max_characters_per_token < 3:
            raise ConfigurationError(
                f"max_characters_per_token must be at least 3, got {max_characters_per_token}"
            )
        self.characters = characters
        self.words = words
        self.max_characters_per_token = max_characters_per_token
        self.width = max_characters_per_token + 2
        self.source = source
        self.digest = _digest(characters, words, max_characters_per_token)
        _SOURCES.setdefault(self.digest, source)
        self._rows: Dict[str, numpy.ndarray] = {}

    @property
    def padding_character(self) -> int:
        """The shifted id that fills a word's row after its last character."""
        return self.characters[PAD] + 1

    def token_row(self, token: str) -> numpy.ndarray:
        """The shifted ids of one token, `(max_characters_per_token + 2,)`."""
        row = self._rows.get(token)
        if row is None:
            if len(self._rows) >= _MAX_REMEMBERED:
                self._rows.clear()
            row = self._rows[token] = self._make_row(self._cut(token))
        return row

    def _cut(self, token: str) -> str:
        """A token cut as EFML's `read_list` cuts it (sentence markers it adds are not)."""
        limit = self.max_characters_per_token
        return token[: limit - 2] if len(token) + 2 > limit else token

    def _make_row(self, token: str) -> numpy.ndarray:
        limit = self.max_characters_per_token
        characters = self.characters
        if token in SENTENCE_MARKERS:
            inner = [characters[token]]
        else:
            oov = characters[OOV]
            inner = [characters.get(character, oov) for character in token]
        ids = [characters[WORD_START]] + inner + [characters[WORD_END]]
        ids += [characters[PAD]] * (limit - len(ids))
        word = 0 if self.words is None else self.words.get(token, self.words[OOV])
        ids += [word >> WORD_ID_BITS, word & (2**WORD_ID_BITS - 1)]
        return numpy.asarray(ids, dtype=numpy.int64) + 1

    def markers(self) -> Tuple[torch.Tensor, torch.Tensor]:
        """The rows of `<bos>` and `<eos>`, which the biLM puts around each sentence."""
        bos, eos = (torch.from_numpy(self._make_row(marker)) for marker in SENTENCE_MARKERS)
        return bos, eos

    def batch_to_ids(self, batch: Sequence[Sequence[str]]) -> torch.Tensor:
        """`(len(batch), longest sentence, max_characters_per_token + 2)` ids, zero past each
        sentence."""
        longest = max((len(sentence) for sentence in batch), default=0)
        ids = numpy.zeros((len(batch), longest, self.width), dtype=numpy.int64)
        for row, sentence in enumerate(batch):
            if sentence:
                ids[row, : len(sentence)] = [self.token_row(token) for token in sentence]
        return torch.from_numpy(ids)

    def clear(self) -> None:
        self._rows.clear()


def source_of(digest: int) -> str:
    """The folder of the model whose tables have `digest` (`EfmlIds.digest`), as far as this
    process loaded it."""
    return _SOURCES.get(digest, f"a model not loaded here (table digest {digest})")


def _digest(characters: Dict[str, int], words: Optional[Dict[str, int]], width: int) -> int:
    """What the ids mean, as a number: two models with this digest make the same ids of
    every token (their tables and token length are the same)."""
    tables = [sorted(characters.items()), sorted(words.items()) if words else None, width]
    text = json.dumps(tables, ensure_ascii=False).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:_DIGEST_BYTES], "big")


def _check_table(table: Dict[str, int], name: str, required: Sequence[str], limit: int) -> None:
    missing: List[str] = [entry for entry in required if entry not in table]
    if missing:
        raise ConfigurationError(
            f"the ELMoForManyLangs {name} lacks {', '.join(missing)}, which EFML's training "
            "writes into every table; is it the model's own?"
        )
    largest = max(table.values())
    if largest > limit or min(table.values()) < 0:
        raise ConfigurationError(
            f"the ELMoForManyLangs {name} has ids from {min(table.values())} to {largest}; "
            f"this loader takes ids from 0 to {limit}"
        )
