"""
Tokenised sentences to the character ids ELMo reads: the same tensor as AllenNLP's
`allennlp.modules.elmo.batch_to_ids`, many times faster, and faster again once its words are
known (`benchmarks/character_ids_speed.py` measures it, docs/performance.md has the figures;
`tests/elmo/test_character_ids.py` checks 10x).

AllenNLP builds an `Instance` with a `TextField` a sentence, indexes them and pads them as a
`Batch`: Python work for every character of every token, every time. A frozen biLM on a GPU
is fast enough (docs/performance.md) that AllenNLP's conversion alone would bound any speed-up
of the biLM itself. Here each distinct word is encoded once, its UTF-8 bytes laid out by numpy,
into a row of a table that remembers up to `max_words` words; a batch is one dictionary lookup
a token and one gather.
"""

import threading
from typing import Dict, List, Sequence

import numpy
import torch

# bilm-tf's character vocabulary, as AllenNLP's `ELMoCharacterMapper` has it: a word is its
# UTF-8 bytes (0-255), at most `MAX_WORD_LENGTH - 2` of them, between beginning- and end-of-word
# markers, padded; the sentence markers `<S>` and `</S>` are words of their own. Every id is
# then shifted by one so that 0 can pad the tokens a sentence does not have
# (`tests/elmo/test_character_ids.py` checks the tensors against AllenNLP's `batch_to_ids`).
MAX_WORD_LENGTH = 50
BEGINNING_OF_SENTENCE_CHARACTER = 256
END_OF_SENTENCE_CHARACTER = 257
BEGINNING_OF_WORD_CHARACTER = 258
END_OF_WORD_CHARACTER = 259
PADDING_CHARACTER = 260
BOS_TOKEN = "<S>"
EOS_TOKEN = "</S>"
DEFAULT_MAX_WORDS = 250_000
_PADDING = PADDING_CHARACTER + 1
_BEGINNING_OF_WORD = BEGINNING_OF_WORD_CHARACTER + 1
_END_OF_WORD = END_OF_WORD_CHARACTER + 1


def _marker_word(character: int) -> List[int]:
    """The unshifted ids of a sentence marker: one character between the word markers."""
    ids = [PADDING_CHARACTER] * MAX_WORD_LENGTH
    ids[:3] = [BEGINNING_OF_WORD_CHARACTER, character, END_OF_WORD_CHARACTER]
    return ids


BEGINNING_OF_SENTENCE_CHARACTERS = _marker_word(BEGINNING_OF_SENTENCE_CHARACTER)
END_OF_SENTENCE_CHARACTERS = _marker_word(END_OF_SENTENCE_CHARACTER)
_MARKER_WORDS = {
    BOS_TOKEN: BEGINNING_OF_SENTENCE_CHARACTERS,
    EOS_TOKEN: END_OF_SENTENCE_CHARACTERS,
}
# The sentence markers, which have fixed ids of their own.
_SPECIAL_WORDS = tuple(_MARKER_WORDS)


def word_character_ids(word: str) -> List[int]:
    """The character ids of one word, as AllenNLP's `elmo_characters` indexer gives them
    (`<S>` and `</S>` are the sentence markers' ids)."""
    if word in _MARKER_WORDS:
        ids = _MARKER_WORDS[word]
    else:
        encoded = word.encode("utf-8", "ignore")[: MAX_WORD_LENGTH - 2]
        ids = [PADDING_CHARACTER] * MAX_WORD_LENGTH
        ids[0] = BEGINNING_OF_WORD_CHARACTER
        ids[1 : len(encoded) + 1] = encoded
        ids[len(encoded) + 1] = END_OF_WORD_CHARACTER
    return [i + 1 for i in ids]


class CharacterIdTable:
    """
    Words to character ids through a table that grows as words are seen: row 0 is padding,
    row `k` a word's ids. When a batch would take the table past `max_words` words it starts
    again empty, so its memory stays under about `max_words` x 100 bytes (int16 rows) unless
    one batch alone has more distinct words.
    Thread-safe.

    # Parameters

    max_words : `int`, optional (default = `250_000`)
        How many distinct words the table remembers.
    """

    def __init__(self, max_words: int = DEFAULT_MAX_WORDS) -> None:
        if max_words < 1:
            raise ValueError(f"max_words must be at least 1, got {max_words}")
        self.max_words = max_words
        self._lock = threading.Lock()
        self._clear()

    def _clear(self) -> None:
        self._rows: Dict[str, int] = {}
        self._table = numpy.zeros((1024, MAX_WORD_LENGTH), dtype=numpy.int16)

    def __len__(self) -> int:
        return len(self._rows)

    def batch_to_ids(self, batch: Sequence[Sequence[str]]) -> torch.Tensor:
        """`(len(batch), longest sentence, 50)` character ids (int64), 0 past each sentence's
        end: AllenNLP's `batch_to_ids(batch)`, value for value."""
        with self._lock:
            if len(self._rows) + sum(len(sentence) for sentence in batch) > self.max_words:
                self._clear()
            self._add_new_words(batch)
            width = max((len(sentence) for sentence in batch), default=0)
            rows = numpy.zeros((len(batch), width), dtype=numpy.int64)
            for position, sentence in enumerate(batch):
                rows[position, : len(sentence)] = [self._rows[word] for word in sentence]
            return torch.from_numpy(self._table[rows]).long()

    def _add_new_words(self, batch: Sequence[Sequence[str]]) -> None:
        new_words = list(
            {word: None for sentence in batch for word in sentence if word not in self._rows}
        )
        if not new_words:
            return
        first = len(self._rows) + 1
        needed = first + len(new_words)
        if needed > len(self._table):
            grown = numpy.zeros((max(needed, 2 * len(self._table)), MAX_WORD_LENGTH), numpy.int16)
            grown[: len(self._table)] = self._table
            self._table = grown
        self._table[first:needed] = encode_words(new_words)
        self._rows.update(zip(new_words, range(first, needed)))


def encode_words(words: Sequence[str]) -> numpy.ndarray:
    """`(len(words), 50)` character ids, `word_character_ids` of each word, encoded together:
    one Python step a word (its UTF-8 bytes), the rest in numpy."""
    width = MAX_WORD_LENGTH - 2
    encoded = [word.encode("utf-8", "ignore")[:width] for word in words]
    lengths = numpy.fromiter(map(len, encoded), dtype=numpy.int64, count=len(words))
    characters = numpy.frombuffer(
        b"".join(code.ljust(width, b"\0") for code in encoded), dtype=numpy.uint8
    ).reshape(len(words), width)
    ids = numpy.full((len(words), MAX_WORD_LENGTH), _PADDING, dtype=numpy.int16)
    ids[:, 0] = _BEGINNING_OF_WORD
    inside = numpy.arange(width) < lengths[:, None]
    ids[:, 1:-1] = numpy.where(inside, characters.astype(numpy.int16) + 1, _PADDING)
    ids[numpy.arange(len(words)), lengths + 1] = _END_OF_WORD
    for row, word in enumerate(words):
        if word in _SPECIAL_WORDS:
            ids[row] = word_character_ids(word)
    return ids


_SHARED_TABLE = CharacterIdTable()


def batch_to_ids(batch: Sequence[Sequence[str]]) -> torch.Tensor:
    """
    A drop-in for `allennlp.modules.elmo.batch_to_ids`: the character ids of a batch of
    tokenised sentences, `(batch, longest sentence, 50)` int64, equal to AllenNLP's, from a
    table shared by the process (`CharacterIdTable`).
    """
    return _SHARED_TABLE.batch_to_ids(batch)
