import json
import logging
import re
from typing import Any, Dict, Tuple

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import IndexField

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.squad.dataset_readers import SpacyRulesTokenizer, SquadV1Reader
from elmo_plugin.allennlp.tasks.squad.dataset_readers.span_mapping import char_span_to_token_span
from tests.fields import field_of, metadata_of, tokens_of
from tests.paths import FIXTURES, SHARED_DATA, TRAINING_CONFIGS

FIXTURE = FIXTURES / "squad" / "tiny_train.json"
SHARED_TRAIN = SHARED_DATA / "squad1.1" / "split" / "train.json"

PASSAGE = "The Broncos beat the Panthers 24–10 in Santa Clara, California."


def squad_file(tmp_path, qas, context=PASSAGE, title="Tiny"):
    path = tmp_path / "squad.json"
    data = {
        "version": "1.1",
        "data": [{"title": title, "paragraphs": [{"context": context, "qas": qas}]}],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def question(qid, text, *answers):
    """A question record; each answer is a substring of PASSAGE (its first occurrence)."""
    return {
        "id": qid,
        "question": text,
        "answers": [{"answer_start": PASSAGE.index(answer), "text": answer} for answer in answers],
    }


def span_of(instance: Instance) -> Tuple[int, int]:
    """The answer's first and last token."""
    return (
        field_of(instance, "span_start", IndexField).sequence_index,
        field_of(instance, "span_end", IndexField).sequence_index,
    )


def span_text(instance):
    start, end = span_of(instance)
    return " ".join(
        token.ensure_text() for token in tokens_of(instance, "passage")[start : end + 1]
    )


def test_tokenizer_keeps_offsets_and_splits_dashes_and_brackets():
    text = "Jerusalem.[citation needed] 1249–1314 self-governed  U.S."
    tokens = SpacyRulesTokenizer().tokenize(text)
    assert [t.text for t in tokens] == [
        "Jerusalem",
        ".",
        "[",
        "citation",
        "needed",
        "]",
        "1249",
        "–",
        "1314",
        "self",
        "-",
        "governed",
        "U.S.",
    ]
    assert all(text[t.idx : t.idx_end] == t.text for t in tokens)


def test_char_span_to_token_span_takes_whole_tokens_and_clips():
    offsets = [(0, 3), (4, 11), (12, 16)]  # "The Broncos beat"
    assert char_span_to_token_span(offsets, (4, 11)) == (1, 1)
    assert char_span_to_token_span(offsets, (5, 14)) == (1, 2)  # inside tokens: whole tokens
    assert char_span_to_token_span(offsets, (12, 30)) == (2, 2)  # runs past the end: clipped
    assert char_span_to_token_span(offsets, (17, 20)) is None  # after the last token


def test_answers_map_to_token_spans_including_the_last_token(tmp_path):
    path = squad_file(
        tmp_path,
        [
            question("q1", "Who?", "Broncos"),
            question("q2", "Score?", "24"),  # inside "24–10" once split at the dash
            question("q3", "Where?", "California."),  # the very end of the passage
            question("q4", "State?", "California"),
        ],
    )
    instances = list(SquadV1Reader().read(path))
    assert [span_text(i) for i in instances] == ["Broncos", "24", "California .", "California"]
    last = len(tokens_of(instances[2], "passage")) - 1
    assert span_of(instances[2])[1] == last
    assert metadata_of(instances[0])["question_id"] == "q1"
    assert metadata_of(instances[0])["title"] == "Tiny"


def test_gold_span_is_the_most_common_reference_and_all_references_are_kept(tmp_path):
    path = squad_file(
        tmp_path,
        [
            question(
                "q1", "Where?", "Santa Clara", "Santa Clara, California", "Santa Clara, California"
            )
        ],
    )
    (instance,) = SquadV1Reader().read(path)
    assert span_text(instance) == "Santa Clara , California"
    assert metadata_of(instance)["answer_texts"] == [
        "Santa Clara",
        "Santa Clara, California",
        "Santa Clara, California",
    ]


def test_truncation_cuts_answers_which_are_skipped_in_training_only(tmp_path, caplog):
    # Tokens: The Broncos beat the Panthers 24 – 10 in Santa Clara , California .
    path = squad_file(
        tmp_path,
        [
            question("inside", "?", "Broncos"),
            question("cut", "?", "Panthers 24–10"),  # starts inside the first 6 tokens, ends after
            question("outside", "?", "Santa Clara"),
        ],
    )
    train_reader = SquadV1Reader(passage_length_limit=6, skip_answers_outside_passage=True)
    with caplog.at_level(logging.WARNING):
        kept = list(train_reader.read(path))
    assert [metadata_of(i)["question_id"] for i in kept] == ["inside"]
    assert train_reader.counts["skipped"] == 2
    assert "cut 1 passage(s) longer than passage_length_limit=6" in caplog.text
    assert "2 of 3 question(s) have their answer outside the cut passage: skipped" in caplog.text

    eval_reader = SquadV1Reader(passage_length_limit=6)
    instances = list(eval_reader.read(path))
    assert [metadata_of(i)["question_id"] for i in instances] == ["inside", "cut", "outside"]
    assert all(len(tokens_of(i, "passage")) == 6 for i in instances)
    cut, outside = instances[1], instances[2]
    assert metadata_of(cut)["answer_outside_passage"]
    assert span_of(cut) == (4, 5)  # clipped
    assert metadata_of(outside)["answer_outside_passage"]
    assert span_of(outside) == (-1, -1)
    assert metadata_of(outside)["answer_texts"] == ["Santa Clara"]
    assert eval_reader.counts["skipped"] == 0


def test_an_answer_ending_exactly_at_the_cut_is_inside(tmp_path):
    path = squad_file(tmp_path, [question("q", "?", "Panthers 24")])
    (instance,) = SquadV1Reader(passage_length_limit=6, skip_answers_outside_passage=True).read(
        path
    )
    assert not metadata_of(instance)["answer_outside_passage"]
    assert span_text(instance) == "Panthers 24"


def test_reader_is_registered_and_builds_from_params(tmp_path):
    reader = DatasetReader.from_params(Params({"type": "squad_v1", "passage_length_limit": 5}))
    assert isinstance(reader, SquadV1Reader)
    instance = reader.text_to_instance("Who won?", PASSAGE)
    assert "span_start" not in instance.fields
    assert len(instance["passage"].tokens) == 5


def test_reads_the_fixture_sliced_from_the_fixed_split():
    instances = list(SquadV1Reader().read(str(FIXTURE)))
    assert len(instances) == 12
    first = instances[0]
    assert span_text(first) == "Denver Broncos"
    assert metadata_of(first)["answer_texts"] == ["Denver Broncos"] * 3


@pytest.mark.skipif(not SHARED_TRAIN.exists(), reason="../shared/data is absent")
def test_reads_every_question_of_the_fixed_train_split():
    reader = SquadV1Reader()
    instances = list(reader.read(str(SHARED_TRAIN)))
    assert len(instances) == 8582
    assert reader.counts["answers_outside_passage"] == 0


@pytest.mark.parametrize(
    "qas, context, message",
    [
        (
            [{"question": "Who?", "answers": [{"answer_start": 4, "text": "Broncos"}]}],
            PASSAGE,
            'question 0: expected an "id" string',
        ),
        (
            [{"id": "q7", "answers": [{"answer_start": 4, "text": "Broncos"}]}],
            PASSAGE,
            "question 'q7': expected a \"question\" string",
        ),
        (
            [{"id": "q7", "question": "Who?"}],
            PASSAGE,
            "question 'q7': expected an \"answers\" list",
        ),
        (
            [
                {
                    "id": "q7",
                    "question": "Who?",
                    "answers": [{"answer_start": 60, "text": "Broncos"}],
                }
            ],
            PASSAGE,
            "question 'q7': answer 'Broncos' at characters [60, 67) lies outside the context of 63",
        ),
        (
            [{"id": "q7", "question": "Who?", "answers": [{"answer_start": -1, "text": "The"}]}],
            PASSAGE,
            "lies outside the context",
        ),
        (
            [
                {
                    "id": "q7",
                    "question": "Who?",
                    "answers": [{"answer_start": "4", "text": "Broncos"}],
                }
            ],
            PASSAGE,
            "question 'q7': expected an integer \"answer_start\"",
        ),
        ([], None, 'paragraph 0: expected a "context" string'),
    ],
)
def test_malformed_records_name_the_file_and_the_record(tmp_path, qas, context, message):
    path = squad_file(tmp_path, qas, context=context, title="Broken_Article")
    with pytest.raises(ConfigurationError) as error:
        list(SquadV1Reader().read(path))
    assert path in str(error.value)
    assert "article 0 ('Broken_Article')" in str(error.value)
    assert message in str(error.value)


def test_invalid_json_and_non_utf8_name_the_file_and_position(tmp_path):
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"data": [\n{"title": "x",,}]}', encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"bad\.json: invalid JSON at line 2, column 15"):
        list(SquadV1Reader().read(str(bad_json)))

    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes('{"data": []}\n"café"'.encode("latin-1"))
    with pytest.raises(ConfigurationError, match=r"latin1\.json: not UTF-8 text \(byte 17, line 2"):
        list(SquadV1Reader().read(str(latin1)))

    not_squad = tmp_path / "list.json"
    not_squad.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"list\.json: expected the SQuAD layout"):
        list(SquadV1Reader().read(str(not_squad)))


def test_an_over_long_question_is_cut_with_a_warning_naming_file_and_record(tmp_path, caplog):
    long_question = " ".join(["who"] * 20) + " ?"
    path = squad_file(tmp_path, [question("q1", long_question, "Broncos")])
    with caplog.at_level(logging.WARNING):
        (instance,) = SquadV1Reader(question_length_limit=5).read(path)
    assert [t.text for t in tokens_of(instance, "question")] == ["who"] * 5
    assert (
        f"{path}: article 0 ('Tiny'), paragraph 0, question 'q1': a question of 21 tokens, "
        "over the maximum of 5: cut to its first 5" in caplog.text
    )
    (whole,) = SquadV1Reader(question_length_limit=None).read(path)
    assert len(tokens_of(whole, "question")) == 21


def test_passages_are_capped_by_default_naming_the_longest_record(tmp_path, caplog):
    long_passage = PASSAGE + " " + " ".join(["more"] * 1200)
    path = squad_file(tmp_path, [question("q1", "Who won ?", "Broncos")], context=long_passage)
    reader = SquadV1Reader()
    with caplog.at_level(logging.WARNING):
        (instance,) = reader.read(path)
    assert len(tokens_of(instance, "passage")) == 1000
    assert span_text(instance) == "Broncos"
    assert (
        "cut 1 passage(s) longer than passage_length_limit=1000 tokens (longest 1214, at "
        f"{path}: article 0 ('Tiny'), paragraph 0, question 'q1')" in caplog.text
    )
    (whole,) = SquadV1Reader(passage_length_limit=None).read(path)
    assert len(tokens_of(whole, "passage")) == 1214


@pytest.mark.parametrize("limit", ["passage_length_limit", "question_length_limit"])
def test_a_limit_below_one_is_a_configuration_error(limit):
    with pytest.raises(ConfigurationError, match=f"{limit} must be at least 1 or None, got 0"):
        settings: Dict[str, Any] = {limit: 0}
        SquadV1Reader(**settings)


def test_the_configs_limits_reach_the_readers():
    configs = TRAINING_CONFIGS / "squad"
    config = configs / "squad_baseline.jsonnet"
    overrides = {"validation_dataset_reader.question_length_limit": 7}
    params = Params.from_file(str(config), json.dumps(overrides))
    train_reader = DatasetReader.from_params(params.pop("dataset_reader"))
    validation_reader = DatasetReader.from_params(params.pop("validation_dataset_reader"))
    assert isinstance(train_reader, SquadV1Reader)
    assert isinstance(validation_reader, SquadV1Reader)
    assert (train_reader._passage_length_limit, train_reader._question_length_limit) == (400, 50)
    # Evaluation keeps whole passages: the reader's default cap is far above any real one.
    limits = (validation_reader._passage_length_limit, validation_reader._question_length_limit)
    assert limits == (1000, 7)


def test_a_passage_given_to_text_to_instance_is_cut_with_a_warning(caplog):
    # What a predictor does: no file, so the warning names the passage by its start.
    with caplog.at_level(logging.WARNING):
        instance = SquadV1Reader(passage_length_limit=5).text_to_instance("Who won?", PASSAGE)
    assert len(instance["passage"].tokens) == 5
    expected = r"passage 'The Broncos beat[^']*': a passage of 14 tokens, over the maximum of 5"
    assert re.search(expected, caplog.text)
