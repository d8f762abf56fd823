"""Bad input to every task reader fails loudly, naming the file (and line), before any training."""

import json
import re

import pytest
from allennlp.data.fields import TextField

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.ner.dataset_readers import Conll2003NerReader
from elmo_plugin.allennlp.tasks.sentiment.dataset_readers import SstTreesReader
from elmo_plugin.allennlp.tasks.snli.dataset_readers import SnliJsonlReader
from elmo_plugin.allennlp.tasks.squad.dataset_readers import SquadV1Reader
from elmo_plugin.allennlp.tasks.srl.dataset_readers import (
    ConllSrlColumnsReader,
    UniversalPropbankSrlReader,
)
from tests.paths import FIXTURES

READERS = {
    "ner": (Conll2003NerReader, "ner/dev.txt"),
    "snli": (SnliJsonlReader, "snli/dev.jsonl"),
    "squad": (SquadV1Reader, "squad/tiny_train.json"),
    "sst": (SstTreesReader, "sst/dev.txt"),
    "srl_columns": (ConllSrlColumnsReader, "srl/conll2005_style.txt"),
    "srl_conllu": (UniversalPropbankSrlReader, "srl/up_english_ewt_train_slice.conllu"),
}
LINE_READERS = ["ner", "snli", "srl_columns", "srl_conllu", "sst"]


def fixture_bytes(name):
    with open(f"{FIXTURES}/{READERS[name][1]}", "rb") as handle:
        return handle.read()


def read(name, path, **kwargs):
    return list(READERS[name][0](**kwargs).read(str(path)))


@pytest.mark.parametrize("name", sorted(READERS))
@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_an_empty_or_blank_file_is_an_error_naming_it(tmp_path, name, content):
    path = tmp_path / "empty.data"
    path.write_bytes(content)
    with pytest.raises(ConfigurationError, match=r"empty.data.*(no |not valid|invalid JSON)"):
        read(name, path)


def test_squad_with_no_articles_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text('{"version": "1.1", "data": []}')
    with pytest.raises(ConfigurationError, match=r"empty.json: no questions"):
        read("squad", path)


def test_snli_with_every_pair_unlabelled_says_why_it_has_nothing(tmp_path):
    path = tmp_path / "unlabelled.jsonl"
    path.write_text('{"gold_label": "-", "sentence1": "a b", "sentence2": "c d"}\n' * 3)
    with pytest.raises(
        ConfigurationError, match=r"unlabelled.jsonl: no pairs with a gold label.*3 skipped"
    ):
        read("snli", path)


def test_snli_label_outside_the_label_set_names_file_and_line(tmp_path):
    path = tmp_path / "maybe.jsonl"
    path.write_text(
        '{"gold_label": "neutral", "sentence1": "a b", "sentence2": "c d"}\n'
        '{"gold_label": "maybe", "sentence1": "a b", "sentence2": "c d"}\n'
    )
    with pytest.raises(
        ConfigurationError, match=r"maybe.jsonl, line 2: .*'maybe'.*expected one of"
    ):
        read("snli", path)
    assert len(read("snli", path, labels=None)) == 2


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_utf8_bom_is_dropped(tmp_path, name):
    path = tmp_path / "bom.data"
    path.write_bytes(b"\xef\xbb\xbf" + fixture_bytes(name))
    with_bom = read(name, path)
    plain = read(name, f"{FIXTURES}/{READERS[name][1]}")
    assert [str(i) for i in with_bom] == [str(i) for i in plain]


@pytest.mark.parametrize("name", LINE_READERS)
def test_a_decoding_error_names_file_and_line(tmp_path, name):
    lines = fixture_bytes(name).split(b"\n")
    lines[2] = lines[2][:3] + b"\xff\xfe" + lines[2][3:]
    path = tmp_path / "bad.data"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(ConfigurationError, match=r"bad.data, line 3: not UTF-8"):
        read(name, path)


HUGE = 10_000  # tokens: what a file that lost its blank lines becomes
LONG_INPUT_LINE = {
    "ner": lambda i: f"w{i} NN I-NP O",
    "srl_columns": lambda i: f"w{i} - *",
    "srl_conllu": lambda i: f"{i + 1}\tw{i}\tw\tX\tX\t_\t0\troot\t_\t_\t_",
}


def with_a_huge_input(name):
    """The reader's fixture followed by one input of HUGE tokens, and the line it starts on."""
    text = fixture_bytes(name).decode("utf-8").rstrip("\n") + "\n\n"
    start = text.count("\n") + 1
    if name == "snli":
        huge = {"gold_label": "neutral", "sentence1": " ".join(["w"] * HUGE), "sentence2": "w ."}
        return text + json.dumps(huge) + "\n", start
    if name == "sst":
        return text + "(2 " + " ".join(f"(2 w{i})" for i in range(HUGE)) + ")\n", start
    if name == "squad":
        data = json.loads(text)
        context = " ".join(["w"] * HUGE)
        qas = [{"id": "huge", "question": "w ?", "answers": [{"answer_start": 0, "text": "w"}]}]
        data["data"].append({"title": "Huge", "paragraphs": [{"context": context, "qas": qas}]})
        return json.dumps(data), None
    return text + "\n".join(LONG_INPUT_LINE[name](i) for i in range(HUGE)) + "\n", start


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_huge_input_is_split_cut_or_skipped_with_a_warning_naming_where(tmp_path, caplog, name):
    # NER splits, SNLI and SST cut, SRL skips (see each reader), SQuAD cuts the passage.
    text, start = with_a_huge_input(name)
    path = tmp_path / "huge.data"
    path.write_text(text)
    with caplog.at_level("WARNING"):
        instances = read(name, path)
    cap = 1000 if name == "squad" else 512
    assert instances
    lengths = [len(f) for i in instances for f in i.fields.values() if isinstance(f, TextField)]
    assert max(lengths) <= cap
    where = re.escape(str(path))
    if start is None:
        expected = rf"longest {HUGE}, at {where}: article \d+ \('Huge'\)"
    else:
        expected = rf"{where}, line {start}: (sentence1: )?a sentence of {HUGE} tokens, over"
    assert re.search(expected, caplog.text)


@pytest.mark.parametrize(
    "name, parameter",
    [(name, "max_sentence_length") for name in LINE_READERS]
    + [("squad", "passage_length_limit"), ("squad", "question_length_limit")],
)
def test_a_maximum_length_below_one_is_a_configuration_error(name, parameter):
    with pytest.raises(ConfigurationError, match=f"{parameter} must be at least 1 or None, got 0"):
        READERS[name][0](**{parameter: 0})


@pytest.mark.parametrize("name", LINE_READERS)
@pytest.mark.parametrize("ending", [b"\r", b"\r\n"])
def test_cr_and_crlf_line_endings_read_as_lf(tmp_path, name, ending):
    path = tmp_path / "endings.data"
    path.write_bytes(fixture_bytes(name).replace(b"\n", ending))
    assert [str(i) for i in read(name, path)] == [
        str(i) for i in read(name, f"{FIXTURES}/{READERS[name][1]}")
    ]


@pytest.mark.parametrize("name", LINE_READERS)
def test_a_line_without_end_is_read_with_a_bound(tmp_path, name, monkeypatch):
    from elmo_plugin.embedding import text_files

    monkeypatch.setattr(text_files, "MAX_LINE_BYTES", 10_000)
    path = tmp_path / "minified.json"
    path.write_bytes(fixture_bytes(name) + b"x" * 50_000)
    with pytest.raises(
        ConfigurationError, match=r"minified.json, line \d+: longer than 10000 bytes"
    ) as caught:
        read(name, path)
    assert len(str(caught.value)) < 1000


def test_ner_quotes_at_most_200_characters_of_a_bad_line(tmp_path):
    path = tmp_path / "minified.json"
    path.write_text(
        json.dumps({"data": [{"k": f"value number {i}"} for i in range(20_000)]}) + "\n"
    )
    with pytest.raises(ConfigurationError, match=r"minified.json, line 1: expected 4") as caught:
        read("ner", path)
    assert len(str(caught.value)) < 500


def test_a_lone_surrogate_in_snli_names_file_line_and_field(tmp_path):
    path = tmp_path / "surrogate.jsonl"
    path.write_text(
        '{"gold_label": "neutral", "sentence1": "a b", "sentence2": "c d"}\n'
        '{"gold_label": "neutral", "sentence1": "a \\ud800 b", "sentence2": "c d"}\n'
    )
    with pytest.raises(
        ConfigurationError, match=r"surrogate.jsonl, line 2: .*sentence1.* lone surrogate \\ud800"
    ):
        read("snli", path)


def test_a_lone_surrogate_in_squad_names_file_and_record(tmp_path):
    data = json.loads(fixture_bytes("squad"))
    data["data"][0]["paragraphs"][0]["qas"][0]["question"] = "what \ud800 ?"
    path = tmp_path / "surrogate.json"
    path.write_text(json.dumps(data))  # json escapes it as \ud800
    with pytest.raises(
        ConfigurationError, match=r"surrogate.json: article 0 .*question .*lone surrogate \\ud800"
    ):
        read("squad", path)


def test_squad_errors_quote_a_huge_title_bounded(tmp_path):
    data = json.loads(fixture_bytes("squad"))
    data["data"][0]["title"] = "T" * 1_000_000
    data["data"][0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] = "0"
    path = tmp_path / "huge_title.json"
    path.write_text(json.dumps(data))
    with pytest.raises(
        ConfigurationError, match=r"huge_title.json: article 0 .*answer_start"
    ) as caught:
        read("squad", path)
    assert len(str(caught.value)) < 1000
