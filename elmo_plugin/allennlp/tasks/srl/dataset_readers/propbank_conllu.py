"""
Parsing of Universal PropBank files: CoNLL-U with a predicate column (11) and one argument
column per predicate (12 ...), argument labels on the arguments' syntactic head words.
"""

from typing import Iterable, Iterator, List, Optional

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import quoted

NUM_CONLLU_COLUMNS = 10
PREDICATE_COLUMN = 10  # 0-based: the 11th column
NO_LABEL = "_"


class PropbankSentence:
    """
    One sentence of a Universal PropBank file, empty nodes and multiword-token lines left out.

    # Parameters

    words : `List[str]`
        Column 2 (FORM) of each token.
    heads : `List[int]`
        Column 7 (HEAD) made 0-based: the index of each token's syntactic head, `-1` for
        the root.
    predicate_indices : `List[int]`
        The tokens with a roleset in column 11, in sentence order.
    argument_labels : `List[List[str]]`
        For the k-th predicate, the label of each token in its argument column ("V" on the
        predicate, "_" on tokens that head no argument). The k-th predicate's column does
        not always hold "V" on the predicate itself: a multiword predicate (`blow_up.06`,
        `twotime.01`) marks its parts "V" and "C-V".
    first_line : `int`
        The file line (1-based) of the sentence's first token, for error messages.
    """

    def __init__(
        self,
        words: List[str],
        heads: List[int],
        predicate_indices: List[int],
        argument_labels: List[List[str]],
        first_line: int,
    ) -> None:
        self.words = words
        self.heads = heads
        self.predicate_indices = predicate_indices
        self.argument_labels = argument_labels
        self.first_line = first_line


class _TokenLine:
    def __init__(self, line_number: int, columns: List[str]) -> None:
        self.line_number = line_number
        self.columns = columns


def read_propbank_conllu(file: Iterable[str], file_name: str) -> Iterator[PropbankSentence]:
    """
    Yields the sentences of the lines of a Universal PropBank file. Sentences without predicates
    are yielded too (with no predicates). Raises `ConfigurationError` naming `file_name`
    and the line on malformed input.
    """
    block: List[_TokenLine] = []
    for line_number, line in enumerate(file, start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
            if block:
                yield _parse_sentence(block, file_name)
            block = []
        elif not line.startswith("#"):
            block.append(_TokenLine(line_number, line.split("\t")))
    if block:
        yield _parse_sentence(block, file_name)


def _is_regular_token(token_id: str) -> bool:
    # "8.1" is an enhanced-UD empty node, "3-4" a multiword token; neither has a HEAD.
    return "." not in token_id and "-" not in token_id


def _error(file_name: str, line_number: int, message: str) -> ConfigurationError:
    return ConfigurationError(f"{file_name}, line {line_number}: {message}")


def _parse_sentence(block: List[_TokenLine], file_name: str) -> PropbankSentence:
    tokens = [token for token in block if _is_regular_token(token.columns[0])]
    if not tokens:
        raise _error(file_name, block[0].line_number, "a sentence without regular tokens")
    for token in tokens:
        if len(token.columns) <= PREDICATE_COLUMN:
            raise _error(
                file_name,
                token.line_number,
                f"expected at least {PREDICATE_COLUMN + 1} tab-separated columns "
                f"(10 CoNLL-U columns and the predicate column), found {len(token.columns)}",
            )
    _check_token_ids(tokens, file_name)
    predicate_indices = [
        i for i, token in enumerate(tokens) if _predicate_roleset(token) is not None
    ]
    argument_columns = [
        _argument_columns(token, len(predicate_indices), file_name) for token in tokens
    ]
    argument_labels = [
        [columns[k] for columns in argument_columns] for k in range(len(predicate_indices))
    ]
    return PropbankSentence(
        words=[token.columns[1] for token in tokens],
        heads=[_head(token, len(tokens), file_name) for token in tokens],
        predicate_indices=predicate_indices,
        argument_labels=argument_labels,
        first_line=tokens[0].line_number,
    )


def _check_token_ids(tokens: List[_TokenLine], file_name: str) -> None:
    for expected, token in enumerate(tokens, start=1):
        if token.columns[0] != str(expected):
            raise _error(
                file_name,
                token.line_number,
                f"expected token ID {expected}, found {quoted(token.columns[0])}",
            )


def _predicate_roleset(token: _TokenLine) -> Optional[str]:
    # An empty column 11 is a known quirk of sentences UP left unannotated (column 10 `_=`).
    roleset = token.columns[PREDICATE_COLUMN]
    return None if roleset in ("", NO_LABEL) else roleset


def _argument_columns(token: _TokenLine, num_predicates: int, file_name: str) -> List[str]:
    columns = token.columns[PREDICATE_COLUMN + 1 :]
    if num_predicates == 0 and all(column == "" for column in columns):
        return []  # predicate-less sentences end in an empty 12th field
    if len(columns) != num_predicates or "" in columns:
        raise _error(
            file_name,
            token.line_number,
            f"the sentence has {num_predicates} predicates, so expected "
            f"{PREDICATE_COLUMN + 1 + num_predicates} non-empty tab-separated columns "
            f"(11 CoNLL-U+ columns and one argument column per predicate), found "
            f"{len(token.columns)} with {len(columns)} argument columns"
            + (" (some empty)" if "" in columns else ""),
        )
    return columns


def _head(token: _TokenLine, num_tokens: int, file_name: str) -> int:
    head = token.columns[6]
    if not head.isdigit() or int(head) > num_tokens:
        raise _error(
            file_name,
            token.line_number,
            f"HEAD (column 7) must be a token ID between 0 and {num_tokens}, found {quoted(head)}",
        )
    return int(head) - 1
