from pathlib import Path

import pytest
from allennlp.common.checks import ConfigurationError

from elmo_plugin.tasks.srl.dataset_readers import ConllSrlColumnsReader

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "srl"
CONLL2012_COLUMNS = dict(
    word_column=3, predicate_column=7, first_argument_column=11, trailing_columns=1
)


def tags_by_predicate(path, **kwargs):
    return [
        (i["metadata"]["predicate_index"], i["tags"].labels, i["predicate_indicator"].labels)
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
