"""
The inputs of the ONNX export of an ELMoForManyLangs (EFML) model, made in plain Python with
the standard library only, from the tables the export stores in its metadata: the reference to
port to Java, C# or C++ beside ONNX Runtime. `tests/elmo/test_onnx_efml.py` checks it against
`EfmlIds` (`elmo_plugin.elmo.formats.efml.ids`), the one definition the rest of the package
uses; the names below are repeated here so that this file stands alone.

The tables: metadata `efml_characters` and, for a model with word embeddings, `efml_words`,
each `token<TAB>id` lines joined by `\\n` (split on `\\n` only: a token may be any other
character). The width: the third dimension of the input `character_ids`.

A token longer than `width - 2` characters (Unicode code points, not UTF-16 units) is cut to
its first `width - 2`, for its characters and its word alike. Its characters are the ids of
`<eow>`, of each character (`<oov>` for one the table lacks), of `<bow>` (EFML swaps the two,
and its weights learnt them so), then of `<pad>` up to `width`; the tokens `<bos>` and `<eos>`
are instead their own single entry between the two. Its word is its id in the word table
(`<oov>` for one it lacks). Every id is then shifted by one, so that 0 can pad the positions
past a sentence's end.
"""

from typing import Dict, List, Optional, Sequence, Tuple


def read_table(text: str) -> Dict[str, int]:
    """A table of the metadata: token to id."""
    table = {}
    for line in text.split("\n"):
        token, _, number = line.rpartition("\t")
        table[token] = int(number)
    return table


class EfmlTokenizer:
    def __init__(self, characters: str, words: Optional[str], width: int) -> None:
        self.characters = read_table(characters)
        self.words = None if words is None else read_table(words)
        self.width = width

    def token_ids(self, token: str) -> Tuple[List[int], int]:
        """The `width` character ids and the word id of one token (the word id 0 where the
        model has no word table)."""
        chars = self.characters
        if len(token) + 2 > self.width:
            token = token[: self.width - 2]
        if token in ("<bos>", "<eos>"):
            inner = [chars[token]]
        else:
            inner = [chars.get(character, chars["<oov>"]) for character in token]
        ids = [chars["<eow>"]] + inner + [chars["<bow>"]]
        ids += [chars["<pad>"]] * (self.width - len(ids))
        word = -1 if self.words is None else self.words.get(token, self.words["<oov>"])
        return [i + 1 for i in ids], word + 1

    def sentences_to_ids(
        self, sentences: Sequence[Sequence[str]]
    ) -> Tuple[List[List[List[int]]], List[List[int]]]:
        """The inputs `character_ids`, `(len(sentences), longest sentence, width)`, and
        `word_ids`, `(len(sentences), longest sentence)`, zero past each sentence's end."""
        longest = max((len(sentence) for sentence in sentences), default=0)
        characters = [[[0] * self.width for _ in range(longest)] for _ in sentences]
        words = [[0] * longest for _ in sentences]
        for row, sentence in enumerate(sentences):
            for position, token in enumerate(sentence):
                characters[row][position], words[row][position] = self.token_ids(token)
        return characters, words
