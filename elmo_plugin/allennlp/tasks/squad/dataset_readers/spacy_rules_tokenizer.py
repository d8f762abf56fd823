import re
from typing import List

import spacy
from allennlp.data.tokenizers import Token, Tokenizer
from overrides import overrides

# Characters SQuAD answers often start or end next to, inside what spaCy keeps as one token
# ("1249–1314", "Empire[citation", "and/or"): splitting there makes ~99.5% of the official
# dev answers start and end on token boundaries instead of ~99%.
_DEFAULT_SPLIT_CHARACTERS = "-–—~/[]:\u200b"


@Tokenizer.register("spacy_rules")
class SpacyRulesTokenizer(Tokenizer):
    """
    spaCy's rule-based English tokenizer (`spacy.blank("en")`: no statistical model, nothing
    to download), with each token further split around `split_characters`. Whitespace is
    dropped; every token keeps its character offsets (`idx`, `idx_end`) into the text, which
    reading comprehension needs to map answers to token spans and back.

    Registered as a `Tokenizer` with name "spacy_rules".

    # Parameters

    split_characters : `str`, optional (default = `"-–—~/[]:"` and zero-width space)
        Characters that become tokens of their own wherever they occur.
    """

    def __init__(self, split_characters: str = _DEFAULT_SPLIT_CHARACTERS) -> None:
        self._spacy = spacy.blank("en").tokenizer
        self._split_pattern = (
            re.compile("([" + re.escape(split_characters) + "])") if split_characters else None
        )

    @overrides
    def tokenize(self, text: str) -> List[Token]:
        tokens: List[Token] = []
        pattern = self._split_pattern
        for spacy_token in self._spacy(text):
            if spacy_token.is_space:
                continue
            if pattern is not None and _needs_split(pattern, spacy_token.text):
                tokens.extend(self._split(pattern, spacy_token.text, spacy_token.idx))
            else:
                tokens.append(_token(spacy_token.text, spacy_token.idx))
        return tokens

    def _split(self, pattern: re.Pattern[str], text: str, offset: int) -> List[Token]:
        tokens: List[Token] = []
        for piece in pattern.split(text):
            if piece and not piece.isspace():
                # A piece such as "Jerusalem." gets spaCy's suffix rules again.
                tokens.extend(
                    _token(sub.text, offset + sub.idx)
                    for sub in self._spacy(piece)
                    if not sub.is_space
                )
            offset += len(piece)
        return tokens


def _needs_split(pattern: re.Pattern[str], text: str) -> bool:
    return len(text) > 1 and bool(pattern.search(text))


def _token(text: str, start: int) -> Token:
    return Token(text, idx=start, idx_end=start + len(text))
