"""
What the ONNX export of an ELMoForManyLangs (EFML) biLM (`export.export_onnx` of an
`EfmlBiLm`) reads, in terms of this package's `EfmlIds`: its two inputs, `character_ids` and
`word_ids`, from `EfmlIds.batch_to_ids` (`onnx_inputs`), and the model's character and word
tables as the text it stores in its metadata (`table_metadata`), from which
`efml_tokenizer` makes the inputs with no torch and nothing else of this package.
Needs no `onnx`.
"""

from typing import Dict

import numpy

from elmo_plugin.elmo.formats.efml.ids import WORD_ID_BITS, EfmlIds
from elmo_plugin.elmo.formats.onnx.names import INPUT_NAME, WORD_IDS_NAME

CHARACTERS_KEY = "efml_characters"
WORDS_KEY = "efml_words"


def onnx_inputs(ids: numpy.ndarray, max_characters_per_token: int) -> Dict[str, numpy.ndarray]:
    """
    The export's inputs from `(..., max_characters_per_token + 2)` `EfmlIds` rows: the
    `character_ids` (the first `max_characters_per_token` columns) and the `word_ids` (the two
    word id columns joined into one id, plus one; 0 where the row is padding).
    """
    ids = numpy.asarray(ids, dtype=numpy.int64)
    characters = ids[..., :max_characters_per_token]
    high, low = ids[..., max_characters_per_token], ids[..., max_characters_per_token + 1]
    padding = (high == 0) & (low == 0)
    words = numpy.where(padding, 0, (((high - 1) << WORD_ID_BITS) | (low - 1)) + 1)
    return {INPUT_NAME: numpy.ascontiguousarray(characters), WORD_IDS_NAME: words}


def table_text(table: Dict[str, int]) -> str:
    """A table as `token<TAB>id` lines joined by `\\n`, by id: `char.dic`'s layout, but with
    every token as the loader read it (the whitespace token as U+3000, nothing to strip)."""
    return "\n".join(f"{token}\t{number}" for token, number in sorted(table.items(), key=_by_id))


def _by_id(item) -> int:
    return item[1]


def table_metadata(ids: EfmlIds) -> Dict[str, str]:
    """The metadata entries the export stores its tables in: the character table always,
    the word table where the model has word embeddings."""
    entries = {CHARACTERS_KEY: table_text(ids.characters)}
    if ids.words is not None:
        entries[WORDS_KEY] = table_text(ids.words)
    return entries
