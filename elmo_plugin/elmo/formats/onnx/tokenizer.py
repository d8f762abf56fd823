"""
The character ids the ONNX model (`elmo_plugin.elmo.formats.onnx.export`) reads, made in plain
Python and numpy, with no torch and nothing else of this package: the reference to port to Java,
C# or C++ beside ONNX Runtime, and what runs the model where there is no PyTorch.
`tests/elmo/test_onnx_export.py` checks it against `batch_to_ids`, which is faster and is the
one definition the rest of the package uses (`elmo_plugin.elmo.bilm.characters.ids`); the
numbers are repeated here so that this file stands alone.

A word is its UTF-8 bytes (0-255; invalid characters dropped), cut to 48 bytes, between a
beginning-of-word (258) and an end-of-word (259) character, padded with 260 to 50; the words
`<S>` and `</S>` are instead the single characters 256 and 257 between the word markers. Every
id is then shifted by one, so that 0 can pad the positions past a sentence's end.
"""

from typing import List, Sequence

import numpy

WORD_LENGTH = 50
_MARKER_CHARACTERS = {"<S>": 256, "</S>": 257}
_BEGINNING_OF_WORD, _END_OF_WORD, _PADDING = 258, 259, 260


def word_to_ids(word: str) -> List[int]:
    """The 50 character ids of one word."""
    if word in _MARKER_CHARACTERS:
        characters = [_MARKER_CHARACTERS[word]]
    else:
        characters = list(word.encode("utf-8", "ignore")[: WORD_LENGTH - 2])
    characters = [_BEGINNING_OF_WORD] + characters + [_END_OF_WORD]
    characters += [_PADDING] * (WORD_LENGTH - len(characters))
    return [character + 1 for character in characters]


def sentences_to_ids(sentences: Sequence[Sequence[str]]) -> numpy.ndarray:
    """`(len(sentences), longest sentence, 50)` int64 ids, zero past each sentence's end: the
    `character_ids` input of the ONNX model."""
    longest = max((len(sentence) for sentence in sentences), default=0)
    ids = numpy.zeros((len(sentences), longest, WORD_LENGTH), dtype=numpy.int64)
    for row, sentence in enumerate(sentences):
        for position, word in enumerate(sentence):
            ids[row, position] = word_to_ids(word)
    return ids
