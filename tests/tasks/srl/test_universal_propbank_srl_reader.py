import json

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.srl.dataset_readers import UniversalPropbankSrlReader
from tests.fields import metadata_of
from tests.paths import FIXTURES, SHARED_DATA, TRAINING_CONFIGS

FIXTURE = FIXTURES / "srl" / "up_english_ewt_train_slice.conllu"
SHARED_DEV = SHARED_DATA / "srl_up_english_ewt" / "en_ewt-up-dev.conllu"

# A sentence of the fixture, whose columns 12 and 13 belong to nominated and replace.
NOMINATED = "President Bush on Tuesday nominated two individuals".split()


def read(path, **kwargs):
    return list(UniversalPropbankSrlReader(**kwargs).read(str(path)))


def instances_of(instances, first_words):
    return [i for i in instances if i["metadata"]["words"][: len(first_words)] == first_words]


def test_one_instance_per_predicate_with_fields():
    instances = read(
        FIXTURE,
        token_indexers={"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()},
    )
    # 28 sentences: 23 with predicates (97 of them), 3 predicate-less, 2 unannotated (`_=`).
    assert len(instances) == 97
    assert len({tuple(i["metadata"]["words"]) for i in instances}) == 23
    first = instances[0]
    assert set(first.fields) == {"tokens", "predicate_indicator", "tags", "metadata"}
    assert set(first["tokens"].token_indexers) == {"tokens", "elmo"}
    assert first["predicate_indicator"].labels == [0, 0, 0, 1, 0, 0, 0]
    assert first["metadata"]["predicate_index"] == 3
    assert first["metadata"]["gold_tags"] == first["tags"].labels
    assert first["tags"].labels == ["B-ARG2", "I-ARG2", "I-ARG2", "B-V", "B-ARG1", "I-ARG1", "O"]


def test_span_mode_tags_cover_dependency_subtrees():
    nominated, replace = instances_of(read(FIXTURE), NOMINATED)
    assert nominated["metadata"]["predicate_index"] == 4
    # replace's ARG1 is the subtree of jurists, which holds "retiring" and the PPs.
    assert replace["tags"].labels == (
        ["O"] * 5 + ["B-ARG0", "I-ARG0", "O", "B-V", "B-ARG1"] + ["I-ARG1"] * 8 + ["O"]
    )


def test_head_mode_tags_only_head_words():
    nominated, _ = instances_of(read(FIXTURE, label_mode="head"), NOMINATED)
    assert nominated["tags"].labels[:9] == [
        "ARG0",
        "O",
        "O",
        "ARGM-TMP",
        "V",
        "O",
        "ARG1",
        "O",
        "ARG2",
    ]
    assert nominated["tags"]._label_namespace == "head_labels"
    assert nominated["metadata"]["label_mode"] == "head"


def test_predicate_less_and_unannotated_sentences_give_no_instances():
    words = {tuple(i["metadata"]["words"]) for i in read(FIXTURE)}
    assert ("***",) not in words  # a predicate-less sentence (empty 12th field)
    assert ("unique", "gifts", "and", "cards") not in words  # `_=` and an empty column 11


def test_empty_nodes_are_skipped():
    (copula,) = instances_of(read(FIXTURE), ["It", "'s", "more", "compact"])
    words = copula["metadata"]["words"]
    assert len(words) == 26 and words[9:12] == ["SX40", "only", "3200"]  # no "has" (10.1)


def test_multiword_predicate_particle_is_c_v():
    blow = [
        i
        for i in instances_of(read(FIXTURE), ["The", "civilians"])
        if i["metadata"]["words"][i["metadata"]["predicate_index"]] == "blow"
    ][0]
    assert blow["tags"].labels[11:14] == ["B-V", "B-ARG1", "B-C-V"]


def write(tmp_path, rows, name="bad.conllu"):
    path = tmp_path / name
    lines = ["# sent_id = s1", "# text = He ran ."] + ["\t".join(row) for row in rows]
    path.write_text("\n".join(lines) + "\n\n")
    return path


def row(token_id, word, head, roleset="_", *arguments):
    return [token_id, word, word, "X", "X", "_", head, "dep", "_", "_", roleset, *arguments]


def test_a_well_formed_handmade_file_reads(tmp_path):
    path = write(
        tmp_path,
        [
            row("1", "He", "2", "_", "ARG0"),
            row("2", "ran", "0", "run.01", "V"),
            row("3", ".", "2", "_", "_"),
        ],
    )
    (instance,) = read(path)
    assert instance["tags"].labels == ["B-ARG0", "B-V", "O"]


@pytest.mark.parametrize(
    "rows, line, message",
    [
        # Line numbers count the two comment lines: the tokens are on lines 3, 4, 5.
        (
            [
                row("1", "He", "2", "_", "ARG0"),
                row("2", "ran", "0", "run.01", "V"),
                row("3", ".", "2", "_", "_", "_"),
            ],
            5,
            "1 predicates, so expected 12",
        ),
        (
            [
                row("1", "He", "2", "_", "ARG0"),
                row("2", "ran", "0", "run.01", "V"),
                row("3", ".", "2", "_"),
            ],
            5,
            "found 11 with 0 argument columns",
        ),
        (
            [
                row("1", "He", "x", "_", "ARG0"),
                row("2", "ran", "0", "run.01", "V"),
                row("3", ".", "2", "_", "_"),
            ],
            3,
            "HEAD",
        ),
        (
            [
                row("1", "He", "2", "_", "ARG0"),
                row("2", "ran", "0", "run.01", "V"),
                row("3", ".", "9", "_", "_"),
            ],
            5,
            "between 0 and 3",
        ),
        (
            [
                row("1", "He", "2", "_", "ARG0"),
                row("2", "ran", "0", "run.01", "V"),
                ["3", ".", "."],
            ],
            5,
            "at least 11",
        ),
        (
            [row("1", "He", "2", "_", "ARG0"), row("3", "ran", "0", "run.01", "V")],
            4,
            "expected token ID 2",
        ),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, rows, line, message):
    path = write(tmp_path, rows)
    with pytest.raises(ConfigurationError) as error:
        read(path)
    assert f"{path}, line {line}:" in str(error.value)
    assert message in str(error.value)


def test_a_head_cycle_names_the_sentence(tmp_path):
    path = write(
        tmp_path,
        [
            row("1", "He", "3", "_", "ARG0"),
            row("2", "ran", "0", "run.01", "V"),
            row("3", ".", "1", "_", "_"),
        ],
    )
    with pytest.raises(ConfigurationError, match=f"{path}, sentence starting at line 3: .*cycle"):
        read(path, label_mode="head")


def test_unknown_label_mode_is_an_error():
    with pytest.raises(ConfigurationError, match="label_mode"):
        UniversalPropbankSrlReader(label_mode="bio")


@pytest.mark.skipif(not SHARED_DEV.exists(), reason="../shared/data is absent")
def test_official_dev_counts_match_the_data_readme():
    instances = read(SHARED_DEV, label_mode="head")
    assert len(instances) == 4977  # predicates
    arguments = sum(tag not in ("O", "V", "C-V") for i in instances for tag in i["tags"].labels)
    assert arguments == 9682 - 20  # non-V labels, less the 20 `C-V` predicate parts


def test_a_sentence_over_the_maximum_length_is_skipped_with_a_warning_naming_file_and_line(
    tmp_path, caplog
):
    # The fixture's first two sentences: 7 tokens from line 4, 19 from line 14.
    path = tmp_path / "two.conllu"
    path.write_text("\n".join(FIXTURE.read_text().split("\n")[:33]) + "\n")
    reader = UniversalPropbankSrlReader(max_sentence_length=7)
    with caplog.at_level("WARNING"):
        instances = list(reader.read(str(path)))
    assert {len(metadata_of(i)["words"]) for i in instances} == {7}
    expected = "two.conllu, line 14: a sentence of 19 tokens, over the maximum of 7: skipped"
    assert expected in caplog.text
    assert reader.long_sentences.count == 1
    whole = read(path, max_sentence_length=None)
    assert sorted({len(i["metadata"]["words"]) for i in whole}) == [7, 19]
    assert len(read(path)) == len(whole)  # the default (512) skips nothing real


def test_a_file_of_only_over_long_sentences_is_an_error_saying_why(tmp_path):
    path = tmp_path / "one.conllu"
    path.write_text("\n".join(FIXTURE.read_text().split("\n")[:11]) + "\n")  # 7 tokens
    expected = r"one.conllu: no sentences found; skipped 1 over max_sentence_length=6"
    with pytest.raises(ConfigurationError, match=expected):
        read(path, max_sentence_length=6)


def test_max_sentence_length_in_a_config_reaches_the_reader():
    config = TRAINING_CONFIGS / "srl" / "srl_baseline.jsonnet"
    params = Params.from_file(str(config), json.dumps({"dataset_reader.max_sentence_length": 7}))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    assert isinstance(reader, UniversalPropbankSrlReader)
    assert reader.long_sentences.max_length == 7
    assert {len(metadata_of(i)["words"]) for i in reader.read(str(FIXTURE))} <= set(range(1, 8))


def test_a_file_without_an_annotated_predicate_is_an_error_naming_it(tmp_path):
    # The fixture's predicate-less sentence, twice.
    sentence = "# text = ***\n1\t***\t***\tPUNCT\tNFP\t_\t0\troot\t0:root\t_\t_\t\n"
    path = tmp_path / "none.conllu"
    path.write_text(sentence + "\n" + sentence, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"none.conllu: no annotated predicates found"):
        read(path)
