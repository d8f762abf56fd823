import json
import logging
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, cast

from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import Field, LabelField, MetadataField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Token, Tokenizer, WhitespaceTokenizer
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import lone_surrogate, quoted, text_lines
from elmo_plugin.allennlp.tasks.reading import (
    DEFAULT_MAX_SENTENCE_LENGTH,
    check_data_file,
    check_max_length,
    require_some,
    truncate_long,
)

logger = logging.getLogger(__name__)

NO_GOLD_LABEL = "-"
SNLI_LABELS = ("entailment", "neutral", "contradiction")


@DatasetReader.register("snli_jsonl")
class SnliJsonlReader(DatasetReader):
    """
    Reads SNLI-style jsonl (one pair a line: `{"gold_label", "sentence1", "sentence2"}`, as in
    the official `snli_1.0_*.jsonl` and MultiNLI files) into instances with `premise` and
    `hypothesis` `TextField`s, a `label` `LabelField` and `metadata` holding the tokens.

    Pairs without a gold label (`"-"`, the SNLI mark for no annotator consensus, or no
    `gold_label` field) are skipped and counted; the count is logged when a file is done and
    kept in `num_skipped_without_label`. Sentences are split on whitespace by default, since
    the SNLI `.tok` files are already tokenised.

    Registered as a `DatasetReader` with name "snli_jsonl".

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional
        (default = `{"tokens": SingleIdTokenIndexer()}`)
        Used for both sentences; ELMo models expect an `elmo_characters` indexer under the
        key `"elmo"`.
    tokenizer : `Tokenizer`, optional (default = `WhitespaceTokenizer()`)
    labels : `Iterable[str]`, optional (default = `["entailment", "neutral", "contradiction"]`)
        The gold labels a pair may have; another label is an error naming the file and line.
        `None` accepts any label.
    max_sentence_length : `int`, optional (default = `512`)
        A premise or hypothesis of more tokens is cut to its first `max_sentence_length`, with a
        warning naming the file and line, so that one huge pair cannot stall a run. The longest
        premise of SNLI 1.0 dev and test has 59 tokens, the longest hypothesis 55: the default
        cuts none. `None` keeps every sentence whole.
    **kwargs
        Passed to `DatasetReader` (e.g. `max_instances`).
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        tokenizer: Optional[Tokenizer] = None,
        labels: Optional[Iterable[str]] = SNLI_LABELS,
        max_sentence_length: Optional[int] = DEFAULT_MAX_SENTENCE_LENGTH,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._tokenizer = tokenizer or WhitespaceTokenizer()
        self._labels = None if labels is None else set(labels)
        self.max_sentence_length = check_max_length(max_sentence_length, "max_sentence_length")
        self.num_skipped_without_label = 0

    @overrides
    def _read(self, file_path: str) -> Iterator[Instance]:
        check_data_file(file_path)
        self.num_skipped_without_label = 0
        pairs = require_some(
            self._labelled_records(file_path),
            file_path,
            "pairs with a gold label",
            lambda: f"{self.num_skipped_without_label} skipped without one ('-' or no gold_label)",
        )
        for line_number, record in self.shard_iterable(pairs):
            where = f"{file_path}, line {line_number}"
            yield self.text_to_instance(
                _string_field(record, "sentence1", where),
                _string_field(record, "sentence2", where),
                _string_field(record, "gold_label", where),
                where=where,
            )
        logger.info(
            "%s: skipped %d pairs without a gold label", file_path, self.num_skipped_without_label
        )

    def _labelled_records(self, file_path: str) -> Iterable[Tuple[int, Dict[str, Any]]]:
        for line_number, line in enumerate(text_lines(file_path), start=1):
            if not line.strip():
                continue
            record = _parse_record(line, file_path, line_number)
            label = record.get("gold_label")
            if label is None or label == NO_GOLD_LABEL:
                self.num_skipped_without_label += 1
                continue
            if self._labels is not None and label not in self._labels:
                raise ConfigurationError(
                    f"{file_path}, line {line_number}: gold_label {quoted(label)} is not a label "
                    f"of the task; expected one of {sorted(self._labels)} (or '-' for none)"
                )
            yield line_number, record

    @overrides(check_signature=False)
    def text_to_instance(
        self,
        premise: str,
        hypothesis: str,
        label: Optional[str] = None,
        where: str = "input",
    ) -> Instance:
        """
        `where` names the source of the pair (file and line) in error messages.
        """
        premise_tokens = self._tokenize(premise, f"{where}: sentence1")
        hypothesis_tokens = self._tokenize(hypothesis, f"{where}: sentence2")
        fields: Dict[str, Field] = {
            "premise": TextField(premise_tokens),
            "hypothesis": TextField(hypothesis_tokens),
            "metadata": MetadataField(
                {
                    "premise_tokens": [token.text for token in premise_tokens],
                    "hypothesis_tokens": [token.text for token in hypothesis_tokens],
                }
            ),
        }
        if label is not None:
            fields["label"] = LabelField(label)
        return Instance(fields)

    @overrides
    def apply_token_indexers(self, instance: Instance) -> None:
        cast(TextField, instance["premise"]).token_indexers = self._token_indexers
        cast(TextField, instance["hypothesis"]).token_indexers = self._token_indexers

    def _tokenize(self, sentence: str, where: str) -> List[Token]:
        tokens = self._tokenizer.tokenize(sentence)
        if not tokens:
            raise ConfigurationError(f"{where}: expected a sentence with at least one token")
        return truncate_long(tokens, self.max_sentence_length, where)


def _parse_record(line: str, file_path: str, line_number: int) -> Dict[str, Any]:
    where = f"{file_path}, line {line_number}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise ConfigurationError(f"{where}: expected one JSON object a line ({error})") from error
    if not isinstance(record, dict):
        raise ConfigurationError(f"{where}: expected a JSON object, got {type(record).__name__}")
    return record


def _string_field(record: Dict[str, Any], key: str, where: str) -> str:
    if key not in record:
        raise ConfigurationError(f'{where}: missing field "{key}"')
    value = record[key]
    if not isinstance(value, str):
        raise ConfigurationError(
            f'{where}: field "{key}" should be a string, got {type(value).__name__}'
        )
    problem = lone_surrogate(value)
    if problem is not None:
        raise ConfigurationError(f'{where}: field "{key}" {problem}')
    return value
