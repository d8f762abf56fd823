import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.data.fields import SequenceLabelField

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.srl.dataset_readers import ConllSrlColumnsReader
from tests import paths
from tests.fields import field_of, metadata_of

FIXTURES = paths.FIXTURES / "srl"
CONLL2012_COLUMNS = dict(
    word_column=3, predicate_column=7, first_argument_column=11, trailing_columns=1
)


def tags_by_predicate(path, **kwargs):
    return [
        (
            metadata_of(i)["predicate_index"],
            field_of(i, "tags", SequenceLabelField).labels,
            field_of(i, "predicate_indicator", SequenceLabelField).labels,
        )
        for i in ConllSrlColumnsReader(**kwargs).read(str(path))
    ]


def test_conll2005_columns_become_bio_per_predicate():
    said, buy, left = tags_by_predicate(FIXTURES / "conll2005_style.txt")
    assert said[0] == 2 and said[2] == [0, 0, 1, 0, 0, 0, 0, 0]
    assert said[1] == ["B-A0", "I-A0", "B-V", "B-A1", "I-A1", "I-A1", "I-A1", "O"]
    assert buy[0] == 5
    assert buy[1] == ["O", "O", "O", "B-A0", "B-AM-MOD", "B-V", "B-A1", "O"]
    # The older `(A0*A0)` / `*AM-TMP)` closings; the predicate-less sentence gives nothing.
    assert left[1] == ["B-A0", "B-V", "B-AM-TMP", "I-AM-TMP", "O"]


def test_conll2012_columns_with_a_trailing_coreference_column():
    (said,) = tags_by_predicate(FIXTURES / "conll2012_style.txt", **CONLL2012_COLUMNS)
    # "rose" has a lemma but no frameset (column 8), so it is not an annotated predicate.
    assert said[0] == 2
    assert said[1] == ["B-ARG0", "I-ARG0", "B-V", "B-ARG1", "I-ARG1", "O"]


@pytest.mark.parametrize(
    "lines, line, message",
    [
        (["He - (A0*)", "ran run (V*) *"], 2, "expected 1 argument columns, found 2"),
        (["He - (A0*", "ran run (V*)"], 2, "while 'A0' is still open"),
        (["He - *)", "ran run (V*)"], 1, "not open"),
        (["He - (A0*", "ran run *"], 2, "never closed"),
        (["He - [A0]", "ran run (V*)"], 1, "expected an argument cell"),
        (["He", "ran run (V*)"], 1, "expected at least 2 columns"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, lines, line, message):
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigurationError) as error:
        list(ConllSrlColumnsReader().read(str(path)))
    assert f"{path}, line {line}:" in str(error.value)
    assert message in str(error.value)


def long_sentence_lines(num_tokens):
    """A sentence of `num_tokens` tokens whose third is its one predicate."""
    return [f"w{i} go (V*)" if i == 2 else f"w{i} - *" for i in range(num_tokens)]


def test_a_sentence_over_the_maximum_length_is_skipped_with_a_warning_naming_file_and_line(
    tmp_path, caplog
):
    path = tmp_path / "long.txt"
    lines = (
        ["He - (A0*)", "ran run (V*)", ""]
        + long_sentence_lines(600)
        + ["", "She - (A0*)", "ran run (V*)"]
    )
    path.write_text("\n".join(lines) + "\n")
    reader = ConllSrlColumnsReader()
    with caplog.at_level("WARNING"):
        kept = [metadata_of(i)["words"] for i in reader.read(str(path))]
    assert kept == [["He", "ran"], ["She", "ran"]]  # skipped whole, neither split nor cut
    assert "long.txt, line 4: a sentence of 600 tokens, over the maximum of 512: skipped" in (
        caplog.text
    )
    assert reader.long_sentences.count == 1
    assert "long.txt: skipped 1 over max_sentence_length=512" in caplog.text
    whole = ConllSrlColumnsReader(max_sentence_length=None).read(str(path))
    assert [len(metadata_of(i)["words"]) for i in whole] == [2, 600, 2]


def test_a_file_of_only_over_long_sentences_is_an_error_saying_why(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text("\n".join(long_sentence_lines(12)) + "\n")
    expected = r"long.txt: no sentences found; skipped 1 over max_sentence_length=10"
    with pytest.raises(ConfigurationError, match=expected):
        list(ConllSrlColumnsReader(max_sentence_length=10).read(str(path)))


def test_max_sentence_length_from_params_reaches_the_reader():
    params = Params({"type": "conll_srl_columns", "max_sentence_length": 6})
    reader = DatasetReader.from_params(params)
    instances = reader.read(str(FIXTURES / "conll2005_style.txt"))
    assert [len(metadata_of(i)["words"]) for i in instances] == [5]


def test_a_file_without_a_predicate_is_an_error_naming_file_and_column(tmp_path):
    path = tmp_path / "no_predicates.txt"
    path.write_text("He -\nran -\n\nShe -\n")
    with pytest.raises(ConfigurationError, match=r"no_predicates.txt: no predicates \(predicate"):
        list(ConllSrlColumnsReader().read(str(path)))
