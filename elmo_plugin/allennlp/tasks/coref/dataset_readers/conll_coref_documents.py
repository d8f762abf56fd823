"""
The documents of a CoNLL-2012-style coreference file (LitBank's `coref/conll/*.conll`, the
CoNLL-2011/2012 shared tasks' `*_conll` files, the reference scorer's test keys): rows of
columns, the word fourth and the coreference column last, in bracket notation.

    #begin document (1023_bleak_house_brat); part 0
    1023_bleak_house_brat	0	0	CHAPTER	_	...	_
    1023_bleak_house_brat	0	3	Chancery	_	...	_	(0)
    ...
    #end document

A row's columns are separated by tabs (by spaces and tabs when it has no tab); empty columns at
its end (a trailing tab) are dropped, as the reference scorer's `split(/\\s+/)` drops them. The
columns are: document name, part, word number (0 at each sentence's first word), word, any
others, and last the coreference column: `-` or `_` (no mention), or pieces `(12` (a mention of
entity 12 starts here), `12)` (ends here) and `(12)` (a one-word mention), `|`-joined (or run
together, `(1(3`, which the reference scorer reads as well). A blank
line ends a sentence. Lines starting with `#` other than `#begin document` and `#end document`
are comments.

Whatever is malformed is a `ValueError` naming the line number (the reader names the file too):
a row outside a document or of fewer than five columns, a word number out of step, an empty
word, a coreference column that is not bracket notation, a mention closed that was never opened,
a mention still open at the document's end, a document without words or without its end.
"""

import re
from collections import defaultdict
from typing import DefaultDict, Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple

from elmo_plugin.embedding.text_files import quoted

Mention = Tuple[int, int]
"""A mention: the document positions of its first and last word (both inclusive)."""

MIN_COLUMNS = 5
NO_MENTION = ("-", "_")
_BEGIN = re.compile(r"#begin document \((?P<name>.*?)\);?\s*(part\s+(?P<part>\S+))?\s*$")
_PIECE = re.compile(r"(?P<open>\()?(?P<entity>\d+)(?P<close>\))?")
_COLUMN = re.compile(r"(\(\d+\)|\(\d+|\d+\)|\|)+")


class CorefDocument(NamedTuple):
    """One document: its sentences of words and its gold clusters."""

    name: str
    """The name in `#begin document (name)`."""
    part: str
    """The part after it (`part 0` -> `"0"`), `""` when there is none."""
    first_line: int
    """The line number of its `#begin document` line."""
    sentences: List[List[str]]
    sentence_lines: List[int]
    """The line number of each sentence's first row."""
    clusters: List[List[Mention]]
    """The mentions of each entity, in document positions: the clusters in the order their
    entities first appear in the coreference column (the order in which the reference scorer
    numbers them), each cluster's mentions in document order (duplicates kept, see
    `canonical_clusters`)."""


def read_documents(lines: Iterable[str]) -> Iterator[CorefDocument]:
    """The documents of a file's `lines` (each with or without its line end), checked as the
    module says; a problem is a `ValueError` starting "line N: "."""
    document: Optional[_OpenDocument] = None
    for line_number, line in enumerate(lines, start=1):
        text = line.rstrip("\r\n")
        if text.startswith("#begin document"):
            if document is not None:
                raise ValueError(
                    f"line {line_number}: '#begin document' inside the document begun at line "
                    f"{document.first_line} (expected '#end document' first)"
                )
            begin = _BEGIN.match(text)
            if begin is None:
                raise ValueError(
                    f"line {line_number}: {quoted(text)} is not '#begin document (name); part N'"
                )
            document = _OpenDocument(begin.group("name"), begin.group("part") or "", line_number)
        elif text.startswith("#end document"):
            if document is None:
                raise ValueError(f"line {line_number}: '#end document' outside a document")
            yield document.close(line_number)
            document = None
        elif text.startswith("#"):
            continue
        elif not text.strip():
            if document is not None:
                document.end_sentence()
        elif document is None:
            raise ValueError(
                f"line {line_number}: a row outside a document (expected it between "
                "'#begin document (name); part N' and '#end document')"
            )
        else:
            document.add_row(text, line_number)
    if document is not None:
        raise ValueError(f"the document begun at line {document.first_line} has no '#end document'")


def canonical_clusters(clusters: Iterable[Iterable[Mention]]) -> List[List[Mention]]:
    """`clusters` with the clusters that share a mention merged (a file may give one span two
    entity ids, e.g. `(3(5` ... `5)3)`; allennlp-models' `_canonicalize_clusters` merges them
    too) and each mention once; in the order of first mention, mentions sorted."""
    parent: Dict[int, int] = {}

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    owner: Dict[Mention, int] = {}
    listed = [sorted(set(cluster)) for cluster in clusters]
    for index, cluster in enumerate(listed):
        parent[index] = index
        for mention in cluster:
            if mention in owner:
                parent[root(index)] = root(owner[mention])
            else:
                owner[mention] = index
    merged: DefaultDict[int, set] = defaultdict(set)
    for index, cluster in enumerate(listed):
        merged[root(index)].update(cluster)
    result = [sorted(mentions) for mentions in merged.values() if mentions]
    return sorted(result, key=lambda cluster: cluster[0])


class _OpenDocument:
    """A document being read: its sentences so far and its open mentions."""

    def __init__(self, name: str, part: str, first_line: int) -> None:
        self.name = name
        self.part = part
        self.first_line = first_line
        self.sentences: List[List[str]] = []
        self.sentence_lines: List[int] = []
        self.current: List[str] = []
        self.num_words = 0
        # entity id -> stack of (start position, line) of its open mentions
        self.open: DefaultDict[str, List[Tuple[int, int]]] = defaultdict(list)
        # entity id -> its mentions, in the order the ids first appear (the scorer's order)
        self.clusters: Dict[str, List[Mention]] = {}

    def end_sentence(self) -> None:
        if self.current:
            self.sentences.append(self.current)
            self.current = []

    def add_row(self, text: str, line_number: int) -> None:
        columns = text.split("\t") if "\t" in text else text.split()
        while columns and not columns[-1].strip():
            columns.pop()
        columns = [column.strip() for column in columns]
        if len(columns) < MIN_COLUMNS:
            raise ValueError(
                f"line {line_number}: {len(columns)} columns, expected at least {MIN_COLUMNS} "
                "(document, part, word number, word, ..., coreference last): "
                f"{quoted(text)}"
            )
        if columns[2] != str(len(self.current)):
            raise ValueError(
                f"line {line_number}: word number {quoted(columns[2])}, expected "
                f"{len(self.current)} (the words of a sentence are numbered from 0; a blank line "
                "ends a sentence)"
            )
        if not columns[3]:
            raise ValueError(f"line {line_number}: an empty word")
        if not self.current:
            self.sentence_lines.append(line_number)
        self._add_mentions(columns[-1], self.num_words, line_number)
        self.current.append(columns[3])
        self.num_words += 1

    def _add_mentions(self, column: str, position: int, line_number: int) -> None:
        if column in NO_MENTION:
            return
        if not _COLUMN.fullmatch(column):
            raise ValueError(
                f"line {line_number}: coreference column {quoted(column)} is not CoNLL-2012 "
                "bracket notation (expected '-', or '(12', '12)' and '(12)' joined by '|')"
            )
        pieces = list(_PIECE.finditer(column))
        # The scorer numbers the entities as it meets them: one-word mentions first, then
        # the mentions that start here.
        for piece in sorted(pieces, key=lambda piece: not piece.group("close")):
            if piece.group("open"):
                self.clusters.setdefault(piece.group("entity"), [])
        # As the reference scorer reads a row: the mentions that start here are opened first,
        # then those that end here are closed (the latest opened of their entity).
        for piece in pieces:
            if piece.group("open") and not piece.group("close"):
                self.open[piece.group("entity")].append((position, line_number))
        for piece in pieces:
            if not piece.group("close"):
                continue
            entity = piece.group("entity")
            if piece.group("open"):
                start = position
            elif self.open[entity]:
                start, _ = self.open[entity].pop()
            else:
                raise ValueError(
                    f"line {line_number}: '{entity})' closes a mention of entity {entity} that "
                    "no earlier row opened (unbalanced brackets)"
                )
            self.clusters[entity].append((start, position))

    def close(self, line_number: int) -> CorefDocument:
        self.end_sentence()
        unclosed = [(line, entity) for entity, starts in self.open.items() for _, line in starts]
        if unclosed:
            line, entity = min(unclosed)
            raise ValueError(
                f"line {line}: the mention of entity {entity} opened here is never closed "
                f"before the '#end document' at line {line_number} (unbalanced brackets)"
            )
        if not self.sentences:
            raise ValueError(
                f"line {self.first_line}: a document without words (its '#end document' is at "
                f"line {line_number})"
            )
        clusters = [sorted(mentions) for mentions in self.clusters.values()]
        return CorefDocument(
            self.name, self.part, self.first_line, self.sentences, self.sentence_lines, clusters
        )
