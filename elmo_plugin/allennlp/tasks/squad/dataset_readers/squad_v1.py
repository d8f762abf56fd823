import json
import logging
from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Tuple, cast

from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import IndexField, MetadataField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Token, Tokenizer
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import lone_surrogate, quoted
from elmo_plugin.allennlp.tasks.reading import (
    DEFAULT_MAX_SENTENCE_LENGTH,
    check_data_file,
    check_max_length,
    require_some,
    truncate_long,
)
from elmo_plugin.allennlp.tasks.squad.dataset_readers.spacy_rules_tokenizer import (
    SpacyRulesTokenizer,
)
from elmo_plugin.allennlp.tasks.squad.dataset_readers.span_mapping import char_span_to_token_span

logger = logging.getLogger(__name__)

# Far above any real passage (the longest of SQuAD v1.1 dev has 706 tokens, 18 of its 2,067 have
# over 400); the configs' training readers cut at 400 to save time and memory.
DEFAULT_MAX_PASSAGE_LENGTH = 1000


@DatasetReader.register("squad_v1")
class SquadV1Reader(DatasetReader):
    """
    Reads the official SQuAD v1.1 JSON (`{"data": [{"title", "paragraphs": [{"context",
    "qas": [{"id", "question", "answers": [{"answer_start", "text"}]}]}]}]}`) into one
    instance per question, with fields `question` and `passage` (`TextField`s), `span_start`
    and `span_end` (`IndexField`s into the passage, inclusive) and `metadata` (the passage
    text, its token offsets, every reference answer text, the question id and title).

    The gold span is the reference answer given most often (the first of those tied); all
    references are kept for the EM/F1 metric. Passages longer than `passage_length_limit`
    tokens are cut, with one warning per file counting them and naming the longest; questions
    longer than `question_length_limit` tokens are cut, each with a warning naming the file
    and record. An answer that no longer fits in the cut passage is marked
    `answer_outside_passage` and its span clipped to the last token, or set to -1 (no label)
    when it starts past the cut; with `skip_answers_outside_passage` (for the training reader)
    such questions are skipped and counted instead.

    Malformed input raises a `ConfigurationError` naming the file and the record.

    Registered as a `DatasetReader` with name "squad_v1".

    # Parameters

    tokenizer : `Tokenizer`, optional (default = `SpacyRulesTokenizer()`)
        Must set each token's character offsets (`idx`, `idx_end`).
    token_indexers : `Dict[str, TokenIndexer]`, optional
        (default = `{"tokens": SingleIdTokenIndexer()}`)
        Used for both question and passage.
    passage_length_limit : `int`, optional (default = `1000`)
        Passage tokens kept. The default is far above real passages (the longest of SQuAD
        v1.1 dev has 706 tokens) and only keeps a malformed file from stalling a run; `None`
        keeps every passage whole.
    question_length_limit : `int`, optional (default = `512`)
        Question tokens kept (the longest question of SQuAD v1.1 dev has 34 tokens); `None`
        keeps every question whole.
    skip_answers_outside_passage : `bool`, optional (default = `False`)
        Skip questions whose gold answer does not fit in the (cut) passage. Set it for training
        only: at evaluation such questions still count, as they do in the official script.
    """

    def __init__(
        self,
        tokenizer: Optional[Tokenizer] = None,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        passage_length_limit: Optional[int] = DEFAULT_MAX_PASSAGE_LENGTH,
        question_length_limit: Optional[int] = DEFAULT_MAX_SENTENCE_LENGTH,
        skip_answers_outside_passage: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        self._tokenizer = tokenizer or SpacyRulesTokenizer()
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._passage_length_limit = check_max_length(passage_length_limit, "passage_length_limit")
        self._question_length_limit = check_max_length(
            question_length_limit, "question_length_limit"
        )
        self._skip_answers_outside_passage = skip_answers_outside_passage
        self.counts: Counter = Counter()
        self._longest_passage_where: Optional[str] = None

    @overrides
    def _read(self, file_path: str) -> Iterable[Instance]:
        check_data_file(file_path)
        data = load_squad_json(cached_path(file_path), file_path)
        self.counts = Counter()
        self._longest_passage_where = None
        questions = require_some(iterate_questions(data, file_path), file_path, "questions")
        records = self.shard_iterable(questions)
        passage_cache: Tuple[Optional[str], List[Token]] = (None, [])
        for record in records:
            context = record["context"]
            if passage_cache[0] != context:
                tokens = self._tokenize_passage(context, record["where"])
                passage_cache = (context, self._cut_passage(tokens, record["where"]))
            instance = self._record_to_instance(record, passage_cache[1])
            self.counts["questions"] += 1
            if cast(MetadataField, instance["metadata"])["answer_outside_passage"]:
                self.counts["answers_outside_passage"] += 1
                if self._skip_answers_outside_passage:
                    self.counts["skipped"] += 1
                    continue
            yield instance
        self._log_counts(file_path)

    def _record_to_instance(self, record: Dict[str, Any], passage_tokens: List[Token]) -> Instance:
        answers = record["answers"]
        return self.text_to_instance(
            record["question"],
            record["context"],
            answer_char_span=most_common_answer_span(answers),
            answer_texts=[answer["text"] for answer in answers],
            passage_tokens=passage_tokens,
            question_id=record["id"],
            title=record["title"],
            where=record["where"],
        )

    def _tokenize_passage(self, context: str, where: str) -> List[Token]:
        tokens = self._tokenizer.tokenize(context)
        if not tokens:
            raise ConfigurationError(f"{where}: the context has no tokens")
        if any(token.idx is None for token in tokens):
            raise ConfigurationError(
                f"{where}: the tokenizer must set each token's character offset (idx)"
            )
        return tokens

    def _cut_passage(self, tokens: List[Token], where: str) -> List[Token]:
        """The first `passage_length_limit` tokens, counted for the file's one warning."""
        if self._passage_length_limit is not None and len(tokens) > self._passage_length_limit:
            self.counts["passages_truncated"] += 1
            if len(tokens) > self.counts["longest_passage"]:
                self.counts["longest_passage"] = len(tokens)
                self._longest_passage_where = where
            tokens = tokens[: self._passage_length_limit]
        return tokens

    def _log_counts(self, file_path: str) -> None:
        counts = self.counts
        if counts["passages_truncated"]:
            logger.warning(
                "%s: cut %d passage(s) longer than passage_length_limit=%d tokens (longest %d, "
                "at %s)",
                file_path,
                counts["passages_truncated"],
                self._passage_length_limit,
                counts["longest_passage"],
                self._longest_passage_where,
            )
        if counts["answers_outside_passage"]:
            action = (
                "skipped" if self._skip_answers_outside_passage else "kept (span clipped or -1)"
            )
            logger.warning(
                "%s: %d of %d question(s) have their answer outside the cut passage: %s",
                file_path,
                counts["answers_outside_passage"],
                counts["questions"],
                action,
            )

    @overrides(check_signature=False)
    def text_to_instance(
        self,
        question: str,
        passage: str,
        answer_char_span: Optional[Tuple[int, int]] = None,
        answer_texts: Optional[List[str]] = None,
        passage_tokens: Optional[List[Token]] = None,
        question_id: Optional[str] = None,
        title: Optional[str] = None,
        where: Optional[str] = None,
    ) -> Instance:
        """
        One question about one passage; `answer_char_span` (`(start, end)`, end exclusive)
        gives the gold span, `answer_texts` the references for EM/F1. Both are left out for
        prediction. `where` names the record (file, article, paragraph, question) in warnings.
        """
        if passage_tokens is None:
            where_passage = f"passage {passage[:40]!r}"
            passage_tokens = truncate_long(
                self._tokenize_passage(passage, where_passage),
                self._passage_length_limit,
                where_passage,
                "passage",
            )
        question_tokens = self._tokenizer.tokenize(question)
        if not question_tokens:
            raise ConfigurationError(f"question {quoted(question_id)}: the question has no tokens")
        question_tokens = truncate_long(
            question_tokens,
            self._question_length_limit,
            where or f"question {quoted(question_id)}",
            "question",
        )
        passage_field = TextField(passage_tokens)
        fields: Dict[str, Any] = {
            "question": TextField(question_tokens),
            "passage": passage_field,
        }
        offsets = [token_offsets(token) for token in passage_tokens]
        answer_outside_passage = False
        if answer_char_span is not None:
            token_span = char_span_to_token_span(offsets, answer_char_span)
            answer_outside_passage = token_span is None or bool(
                passage[offsets[-1][1] : answer_char_span[1]].strip()
            )
            start, end = token_span if token_span is not None else (-1, -1)
            fields["span_start"] = IndexField(start, passage_field)
            fields["span_end"] = IndexField(end, passage_field)
        fields["metadata"] = MetadataField(
            {
                "question_id": question_id,
                "title": title,
                "passage": passage,
                "question_tokens": [token.text for token in question_tokens],
                "passage_tokens": [token.text for token in passage_tokens],
                "token_offsets": offsets,
                "answer_texts": answer_texts or [],
                "answer_outside_passage": answer_outside_passage,
            }
        )
        return Instance(fields)

    @overrides
    def apply_token_indexers(self, instance: Instance) -> None:
        cast(TextField, instance["question"]).token_indexers = self._token_indexers
        cast(TextField, instance["passage"]).token_indexers = self._token_indexers


def token_offsets(token: Token) -> Tuple[int, int]:
    """A token's `(start, end)` character offsets, end exclusive. `Token` types `idx` and
    `text` as optional; a passage's tokens have both (`_tokenize_passage` checks `idx`)."""
    start, text = cast(int, token.idx), cast(str, token.text)
    return start, token.idx_end if token.idx_end is not None else start + len(text)


def most_common_answer_span(answers: List[Dict[str, Any]]) -> Tuple[int, int]:
    """The `(start, end)` character span given by most references; the earliest listed on ties."""
    spans = Counter(
        (answer["answer_start"], answer["answer_start"] + len(answer["text"])) for answer in answers
    )
    return spans.most_common(1)[0][0]


def load_squad_json(local_path: str, file_path: str) -> List[Dict[str, Any]]:
    """The `data` list of a SQuAD JSON file; a `ConfigurationError` naming the file when it is
    unreadable."""
    with open(local_path, "rb") as file:
        raw = file.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ConfigurationError(
            f"{file_path}: not UTF-8 text (byte {error.start}, line {line}: {error.reason})"
        ) from error
    try:
        dataset = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigurationError(
            f"{file_path}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        ) from error
    if not isinstance(dataset, dict) or not isinstance(dataset.get("data"), list):
        raise ConfigurationError(
            f'{file_path}: expected the SQuAD layout {{"version": ..., "data": [articles]}}'
        )
    return dataset["data"]


def iterate_questions(articles: List[Any], file_path: str) -> Iterable[Dict[str, Any]]:
    """
    Every question of a SQuAD `data` list as `{"where", "title", "context", "id", "question",
    "answers"}`, checked field by field; `where` names the file and record for messages.
    """
    for article_index, article in enumerate(articles):
        where = f"{file_path}: article {article_index}"
        article = _expect(article, dict, where, "an article object")
        title = article.get("title", f"#{article_index}")
        where = f"{file_path}: article {article_index} ({quoted(title)})"
        paragraphs = _expect(article.get("paragraphs"), list, where, 'a "paragraphs" list')
        for paragraph_index, paragraph in enumerate(paragraphs):
            paragraph_where = f"{where}, paragraph {paragraph_index}"
            paragraph = _expect(paragraph, dict, paragraph_where, "a paragraph object")
            context = _expect(paragraph.get("context"), str, paragraph_where, 'a "context" string')
            questions = _expect(paragraph.get("qas"), list, paragraph_where, 'a "qas" list')
            for question_index, qa in enumerate(questions):
                yield _checked_question(qa, question_index, context, title, paragraph_where)


def _checked_question(
    qa: Any, question_index: int, context: str, title: str, paragraph_where: str
) -> Dict[str, Any]:
    where = f"{paragraph_where}, question {question_index}"
    qa = _expect(qa, dict, where, "a question object")
    question_id = _expect(qa.get("id"), str, where, 'an "id" string')
    where = f"{paragraph_where}, question {quoted(question_id)}"
    question = _expect(qa.get("question"), str, where, 'a "question" string')
    if qa.get("is_impossible"):
        raise ConfigurationError(f"{where}: unanswerable (SQuAD 2.0) questions are not supported")
    answers = _expect(qa.get("answers"), list, where, 'an "answers" list')
    if not answers:
        raise ConfigurationError(f"{where}: no reference answers")
    for answer in answers:
        _check_answer(answer, context, where)
    return {
        "where": where,
        "title": title,
        "context": context,
        "id": question_id,
        "question": question,
        "answers": answers,
    }


def _check_answer(answer: Any, context: str, where: str) -> None:
    answer = _expect(answer, dict, where, "answer objects")
    text = _expect(answer.get("text"), str, where, 'an answer "text" string')
    start = answer.get("answer_start")
    if not isinstance(start, int) or isinstance(start, bool):
        raise ConfigurationError(
            f'{where}: expected an integer "answer_start", got {quoted(start)}'
        )
    if not text.strip():
        raise ConfigurationError(f"{where}: empty answer text")
    if start < 0 or start + len(text) > len(context):
        raise ConfigurationError(
            f"{where}: answer {quoted(text)} at characters [{start}, {start + len(text)}) lies "
            f"outside the context of {len(context)} characters"
        )
    if context[start : start + len(text)] != text:
        logger.warning("%s: answer %s does not match the context at %d", where, quoted(text), start)


def _expect(value: Any, expected_type: type, where: str, what: str) -> Any:
    if not isinstance(value, expected_type):
        raise ConfigurationError(f"{where}: expected {what}, got {type(value).__name__}")
    problem = lone_surrogate(value) if isinstance(value, str) else None
    if problem is not None:
        raise ConfigurationError(f"{where}: {what} {problem}")
    return value
