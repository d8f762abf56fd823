import logging
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Union, cast

from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, MetadataField, SequenceLabelField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Token
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import quoted, text_lines
from elmo_plugin.allennlp.tasks.ner.tag_schemes import TAG_SCHEMES, iob1_to_scheme
from elmo_plugin.allennlp.tasks.reading import (
    DEFAULT_MAX_SENTENCE_LENGTH,
    check_data_file,
    check_max_length,
    require_some,
    split_long,
)

logger = logging.getLogger(__name__)

CONLL2003_ENTITY_TYPES = ("PER", "LOC", "ORG", "MISC")
_NUM_COLUMNS = 4
_DOCUMENT_START = "-DOCSTART-"


class Sentence:
    """One sentence of a CoNLL file: its rows' columns and where it starts in the file."""

    def __init__(self, first_line: int) -> None:
        self.first_line = first_line
        self.rows: List[List[str]] = []


@DatasetReader.register("conll2003_ner")
class Conll2003NerReader(DatasetReader):
    """
    Reads the original CoNLL-2003 NER files: one token per line with four space-separated
    columns `token POS chunk NER`, a blank line between sentences, and `-DOCSTART-` lines
    between documents. The IOB1 NER tags of the files are recoded to `tag_scheme`.

    Each sentence becomes an `Instance` with a `TextField` "tokens", a `SequenceLabelField`
    "tags" (when the file has tags) and a `MetadataField` "metadata" holding the "words".

    The instances are those of AllenNLP's core `conll2003` reader with `tag_label="ner"` (same
    fields and sentences, recoded by the same `to_bioul`). What ours adds, each tried on
    `conll2003`: a bad file is a `ConfigurationError` naming the file and line, where
    `conll2003` names neither (a row of fewer than four columns: an unpacking `ValueError`; of
    more: the rest silently dropped; a tag that is not IOB1: `InvalidTagSequence`; also here an
    entity type outside `entity_types`, bytes that are not UTF-8 and a `-DOCSTART-` with no
    sentence); a file with no sentence is an error (`conll2003` gives no instances); a UTF-8
    BOM is dropped (`conll2003` reads the first `-DOCSTART-` line as a word and, recoding to
    BIOUL, fails on its `-X-` chunk tag); an over-long sentence is split; tags recode to BIO as
    well as BIOUL; `text_to_instance` takes strings too (the predictor's input).

    It does not subclass `conll2003`: its constructor passes `**kwargs` on, so AllenNLP's
    `from_params` would accept that reader's `tag_label`, `feature_labels` and
    `convert_to_coding_scheme` in our configs (a `TypeError` or an option with no effect
    here), where now they are refused as unexpected keyword arguments.

    Registered as a `DatasetReader` with name "conll2003_ner".

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional
        (default = `{"tokens": SingleIdTokenIndexer()}`)
        E.g. words, characters, and `elmo_characters` for ELMo.
    tag_scheme : `str`, optional (default = `"BIOUL"`)
        `"BIO"` or `"BIOUL"`: the tags the model learns.
    entity_types : `Iterable[str]`, optional (default = `["PER", "LOC", "ORG", "MISC"]`)
        The entity types a tag may name; a tag of another type is an error. `None` accepts
        any type.
    label_namespace : `str`, optional (default = `"labels"`)
    max_sentence_length : `int`, optional (default = `512`)
        A longer sentence is split into pieces of this many tokens, with a warning naming the
        file and line (a file that lost its blank lines would otherwise be one huge sentence).
        `None` keeps every sentence whole.
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        tag_scheme: str = "BIOUL",
        entity_types: Optional[Iterable[str]] = CONLL2003_ENTITY_TYPES,
        label_namespace: str = "labels",
        max_sentence_length: Optional[int] = DEFAULT_MAX_SENTENCE_LENGTH,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        if tag_scheme not in TAG_SCHEMES:
            raise ConfigurationError(f"tag_scheme must be one of {TAG_SCHEMES}, got {tag_scheme!r}")
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.tag_scheme = tag_scheme
        self._entity_types = None if entity_types is None else set(entity_types)
        self._label_namespace = label_namespace
        self.max_sentence_length = check_max_length(max_sentence_length, "max_sentence_length")

    @overrides
    def _read(self, file_path: str) -> Iterable[Instance]:
        check_data_file(file_path)
        logger.info("Reading CoNLL-2003 NER sentences from %s", file_path)
        sentences = self._sentences(text_lines(file_path), file_path)
        for sentence in self.shard_iterable(require_some(sentences, file_path, "sentences")):
            for rows in split_long(
                sentence.rows, self.max_sentence_length, file_path, sentence.first_line
            ):
                yield self.text_to_instance(
                    [Token(row[0]) for row in rows], [row[3] for row in rows]
                )

    def _sentences(self, lines: Iterable[str], file_path: str) -> Iterator[Sentence]:
        """The sentences of the file, checked, with `-DOCSTART-` lines and blank lines as
        separators; an empty document is an error."""
        sentence: Optional[Sentence] = None
        document_start: Optional[int] = None
        sentences_in_document = 0
        for line_number, line in enumerate(lines, start=1):
            columns = line.split()
            if not columns or columns[0] == _DOCUMENT_START:
                if sentence is not None:
                    yield sentence
                    sentences_in_document += 1
                    sentence = None
                if columns:
                    self._check_document_not_empty(document_start, sentences_in_document, file_path)
                    document_start, sentences_in_document = line_number, 0
                continue
            self._check_row(columns, file_path, line_number)
            if sentence is None:
                sentence = Sentence(line_number)
            sentence.rows.append(columns)
        if sentence is not None:
            yield sentence
            sentences_in_document += 1
        self._check_document_not_empty(document_start, sentences_in_document, file_path)

    @staticmethod
    def _check_document_not_empty(
        document_start: Optional[int], sentences_in_document: int, file_path: str
    ) -> None:
        if document_start is not None and sentences_in_document == 0:
            raise ConfigurationError(
                f"{file_path}, line {document_start}: empty document (a -DOCSTART- line "
                "followed by no sentence before the next -DOCSTART- or the end of the file)"
            )

    def _check_row(self, columns: List[str], file_path: str, line_number: int) -> None:
        if len(columns) != _NUM_COLUMNS:
            raise ConfigurationError(
                f"{file_path}, line {line_number}: expected {_NUM_COLUMNS} space-separated "
                f"columns 'token POS chunk NER', found {len(columns)}: {quoted(' '.join(columns))}"
            )
        problem = self._tag_problem(columns[3])
        if problem:
            raise ConfigurationError(f"{file_path}, line {line_number}: {problem}")

    def _tag_problem(self, tag: str) -> Optional[str]:
        """Why `tag` is not an IOB1 NER tag of a known type, or None when it is one."""
        if tag == "O":
            return None
        prefix, _, entity_type = tag.partition("-")
        if prefix not in ("I", "B") or not entity_type:
            return f"NER tag {quoted(tag)} is not IOB1 (expected 'O', 'I-TYPE' or 'B-TYPE')"
        if self._entity_types is not None and entity_type not in self._entity_types:
            return (
                f"NER tag {quoted(tag)} has an unknown entity type {quoted(entity_type)} "
                f"(expected one of {sorted(self._entity_types)})"
            )
        return None

    @overrides(check_signature=False)
    def text_to_instance(
        self, tokens: Sequence[Union[Token, str]], ner_tags: Optional[List[str]] = None
    ) -> Instance:
        """
        # Parameters

        tokens : `Sequence[Union[Token, str]]`
        ner_tags : `List[str]`, optional
            The sentence's IOB1 tags, as in the files; recoded to `tag_scheme`.
        """
        words = [token if isinstance(token, Token) else Token(token) for token in tokens]
        text_field = TextField(words)
        fields: Dict[str, Field] = {
            "tokens": text_field,
            "metadata": MetadataField({"words": [token.text for token in words]}),
        }
        if ner_tags is not None:
            fields["tags"] = SequenceLabelField(
                iob1_to_scheme(ner_tags, self.tag_scheme), text_field, self._label_namespace
            )
        return Instance(fields)

    @overrides
    def apply_token_indexers(self, instance: Instance) -> None:
        cast(TextField, instance["tokens"]).token_indexers = self._token_indexers
