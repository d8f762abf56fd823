import logging
import re
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import quoted, text_lines
from elmo_plugin.allennlp.tasks.reading import (
    DEFAULT_MAX_SENTENCE_LENGTH,
    LongSkipper,
    check_data_file,
    require_any,
)
from elmo_plugin.allennlp.tasks.srl.dataset_readers.srl_instance import (
    attach_token_indexers,
    srl_instance,
)
from elmo_plugin.allennlp.tasks.srl.label_modes import SPAN_LABELS
from elmo_plugin.allennlp.tasks.srl.tags import OUTSIDE_TAG

logger = logging.getLogger(__name__)

# "(A0*", "*", "*)", "*A0)", "(V*)", "(A0*A0)": an optional opening, the word, an optional close.
_BRACKET_CELL = re.compile(r"^(?:\((?P<open>[^()*]+))?\*(?P<close>[^()*]*\))?$")
_NOT_A_PREDICATE = "-"


@DatasetReader.register("conll_srl_columns")
class ConllSrlColumnsReader(DatasetReader):
    """
    Reads span-based SRL in the CoNLL-2005 / CoNLL-2012 column format: whitespace-separated
    columns, one token a line, a blank line after each sentence, lines starting with `#`
    (CoNLL-2012's `#begin document`) skipped. One column holds the word, one marks the
    predicates (`-` on non-predicates, e.g. the verb's lemma on predicates), and the k-th
    argument column holds the bracketed arguments of the k-th predicate: `(A0*` opens an
    argument, `*)` (or `*A0)`) closes it, `(V*)` is the verb, `*` is inside or outside.

    Each predicate becomes one `Instance` with BIO "tags" (`B-A0 I-A0 ... B-V ... O`),
    "tokens", "predicate_indicator" and "metadata", as "universal_propbank_srl" makes.

    For CoNLL-2005 `paste`d words and props files (`word pred args...`) the defaults fit; for
    CoNLL-2012 `*_conll` files use `word_column: 3, predicate_column: 7,
    first_argument_column: 11, trailing_columns: 1` (the last column is coreference).

    Registered as a `DatasetReader` with name "conll_srl_columns".

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional
        (default = `{"tokens": SingleIdTokenIndexer()}`)
    word_column : `int`, optional (default = `0`)
    predicate_column : `int`, optional (default = `1`)
    first_argument_column : `int`, optional (default = `2`)
    trailing_columns : `int`, optional (default = `0`)
        Columns after the argument columns that are not arguments.
    label_namespace : `str`, optional (default = `"span_labels"`)
        The "deep_srl" model's default for span labels (the tags are always the `"span"`
        label mode's).
    max_sentence_length : `int`, optional (default = `512`)
        A sentence of more tokens is skipped, with a warning naming the file and line, and
        counted in `long_sentences.count`: skipped, neither split nor cut, for the reasons
        "universal_propbank_srl" gives. The default is meant to be far above any real sentence.
        `None` keeps every sentence.
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        word_column: int = 0,
        predicate_column: int = 1,
        first_argument_column: int = 2,
        trailing_columns: int = 0,
        label_namespace: Optional[str] = None,
        max_sentence_length: Optional[int] = DEFAULT_MAX_SENTENCE_LENGTH,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._word_column = word_column
        self._predicate_column = predicate_column
        self._first_argument_column = first_argument_column
        self._trailing_columns = trailing_columns
        self._label_mode = SPAN_LABELS
        self._label_namespace = self._label_mode.namespace(label_namespace)
        self.long_sentences = LongSkipper(max_sentence_length)

    @overrides
    def _read(self, file_path: str) -> Iterable[Instance]:
        check_data_file(file_path)
        logger.info("Reading CoNLL SRL instances from %s", file_path)
        sentences = self.long_sentences.some_kept_sentences(
            _sentences(text_lines(file_path)), lambda rows: rows, lambda rows: rows[0][0], file_path
        )
        kept = require_any(
            sentences,
            self._has_predicate,
            file_path,
            f"predicates (predicate_column {self._predicate_column})",
        )
        for rows in self.shard_iterable(kept):
            yield from self._sentence_instances(rows, file_path)
        if self.long_sentences.count:
            logger.warning("%s: %s", file_path, self.long_sentences.summary())

    def _has_predicate(self, rows: List[Tuple[int, List[str]]]) -> bool:
        column = self._predicate_column
        return any(len(cells) > column and cells[column] != _NOT_A_PREDICATE for _, cells in rows)

    def _sentence_instances(
        self, rows: List[Tuple[int, List[str]]], file_path: str
    ) -> Iterator[Instance]:
        min_columns = max(
            self._word_column + 1,
            self._predicate_column + 1,
            self._first_argument_column + self._trailing_columns,
        )
        for line_number, columns in rows:
            if len(columns) < min_columns:
                raise ConfigurationError(
                    f"{file_path}, line {line_number}: expected at least {min_columns} "
                    f"columns, found {len(columns)}"
                )
        predicate_indices = [
            i
            for i, (_, columns) in enumerate(rows)
            if columns[self._predicate_column] != _NOT_A_PREDICATE
        ]
        argument_columns = [
            self._argument_cells(row, len(predicate_indices), file_path) for row in rows
        ]
        words = [columns[self._word_column] for _, columns in rows]
        for k, predicate_index in enumerate(predicate_indices):
            line_numbers = [line_number for line_number, _ in rows]
            column = [(line, cells[k]) for line, cells in zip(line_numbers, argument_columns)]
            tags = _brackets_to_bio(column, file_path)
            yield self.text_to_instance(words, predicate_index, tags)

    def _argument_cells(
        self, row: Tuple[int, List[str]], num_predicates: int, file_path: str
    ) -> List[str]:
        line_number, columns = row
        end = len(columns) - self._trailing_columns
        cells = columns[self._first_argument_column : end]
        if len(cells) != num_predicates:
            raise ConfigurationError(
                f"{file_path}, line {line_number}: the sentence has {num_predicates} predicates "
                f"(non-'-' entries in column {self._predicate_column + 1}), so expected "
                f"{num_predicates} argument columns, found {len(cells)}"
            )
        return cells

    @overrides(check_signature=False)
    def text_to_instance(
        self, words: List[str], predicate_index: int, tags: Optional[List[str]] = None
    ) -> Instance:
        return srl_instance(words, predicate_index, self._label_mode, self._label_namespace, tags)

    @overrides
    def apply_token_indexers(self, instance: Instance) -> None:
        attach_token_indexers(instance, self._token_indexers)


def _sentences(lines: Iterable[str]) -> Iterator[List[Tuple[int, List[str]]]]:
    rows: List[Tuple[int, List[str]]] = []
    for line_number, line in enumerate(lines, start=1):
        if line.startswith("#"):
            continue
        columns = line.split()
        if columns:
            rows.append((line_number, columns))
        elif rows:
            yield rows
            rows = []
    if rows:
        yield rows


def _brackets_to_bio(cells: List[Tuple[int, str]], file_path: str) -> List[str]:
    """BIO tags from one argument column's bracketed cells, given with their line numbers."""
    tags: List[str] = []
    open_label: Optional[str] = None
    for line_number, cell in cells:
        match = _BRACKET_CELL.match(cell)
        if match is None:
            raise ConfigurationError(
                f"{file_path}, line {line_number}: expected an argument cell like '(A0*', "
                f"'*', '*)' or '(V*)', found {quoted(cell)}"
            )
        if match.group("open"):
            if open_label is not None:
                raise ConfigurationError(
                    f"{file_path}, line {line_number}: '{cell}' opens an argument while "
                    f"'{open_label}' is still open"
                )
            open_label = match.group("open")
            tags.append("B-" + open_label)
        elif open_label is not None:
            tags.append("I-" + open_label)
        else:
            tags.append(OUTSIDE_TAG)
        if match.group("close"):
            closing = match.group("close")[:-1]
            if open_label is None or closing not in ("", open_label):
                raise ConfigurationError(
                    f"{file_path}, line {line_number}: '{cell}' closes an argument that is "
                    "not open"
                )
            open_label = None
    if open_label is not None:
        raise ConfigurationError(
            f"{file_path}, line {cells[-1][0]}: argument '{open_label}' is never closed"
        )
    return tags
