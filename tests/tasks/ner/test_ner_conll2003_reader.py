from pathlib import Path

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.data.fields import SequenceLabelField, TextField

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.ner.dataset_readers import Conll2003NerReader
from tests import paths
from tests.fields import field_of, metadata_of, tokens_of

FIXTURES = paths.FIXTURES / "ner"

# A hand-worked example: single-token entities, a three-token entity, and IOB1's B- (an
# entity directly after another of the same type).
EXAMPLE = """-DOCSTART- -X- O O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O
. . O O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER
John NNP I-NP B-PER
Smith NNP I-NP I-PER
visited VBD I-VP O
United NNP I-NP I-LOC
Arab NNP I-NP I-LOC
Emirates NNPS I-NP I-LOC
"""
EXPECTED = {
    "BIOUL": [
        ["U-ORG", "O", "U-MISC", "O", "O"],
        ["B-PER", "L-PER", "B-PER", "L-PER", "O", "B-LOC", "I-LOC", "L-LOC"],
    ],
    "BIO": [
        ["B-ORG", "O", "B-MISC", "O", "O"],
        ["B-PER", "I-PER", "B-PER", "I-PER", "O", "B-LOC", "I-LOC", "I-LOC"],
    ],
}


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "data.txt"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("scheme", ["BIO", "BIOUL"])
def test_iob1_tags_are_recoded_to_the_scheme(tmp_path, scheme):
    instances = list(Conll2003NerReader(tag_scheme=scheme).read(write(tmp_path, EXAMPLE)))
    assert [
        field_of(instance, "tags", SequenceLabelField).labels for instance in instances
    ] == EXPECTED[scheme]
    assert [t.text for t in tokens_of(instances[0], "tokens")] == [
        "EU",
        "rejects",
        "German",
        "call",
        ".",
    ]
    assert metadata_of(instances[1])["words"][:2] == ["Peter", "Blackburn"]


def test_gives_the_instances_of_allennlps_conll2003_reader():
    from allennlp.data.dataset_readers.conll2003 import Conll2003DatasetReader

    def fields(instances):
        return [
            ([t.text for t in i["tokens"].tokens], i["tags"].labels, i["metadata"]["words"])
            for i in instances
        ]

    path = FIXTURES / "train.txt"
    theirs = Conll2003DatasetReader(convert_to_coding_scheme="BIOUL").read(path)
    assert fields(Conll2003NerReader(tag_scheme="BIOUL").read(path)) == fields(theirs)


@pytest.mark.parametrize(
    "key, value", [("tag_label", "pos"), ("feature_labels", ["pos"]), ("coding_scheme", "IOB1")]
)
def test_the_options_of_allennlps_conll2003_reader_are_refused(key, value):
    params = Params({"type": "conll2003_ner", key: value})
    with pytest.raises((TypeError, ConfigurationError), match=key):
        DatasetReader.from_params(params)


def test_reads_the_fixture_slices_of_each_split():
    reader = Conll2003NerReader()
    counts = {
        split: len(list(reader.read(FIXTURES / f"{split}.txt")))
        for split in ("train", "dev", "test")
    }
    assert counts == {"train": 21, "dev": 13, "test": 5}


def test_builds_from_config_with_the_token_indexers_asked():
    reader = DatasetReader.from_params(
        Params(
            {
                "type": "conll2003_ner",
                "tag_scheme": "BIO",
                "token_indexers": {
                    "tokens": {"type": "single_id"},
                    "elmo": {"type": "elmo_characters"},
                },
            }
        )
    )
    assert isinstance(reader, Conll2003NerReader)
    instance = next(iter(reader.read(FIXTURES / "test.txt")))
    reader.apply_token_indexers(instance)
    assert sorted(field_of(instance, "tokens", TextField).token_indexers) == ["elmo", "tokens"]
    assert reader.tag_scheme == "BIO"


def test_text_to_instance_without_tags_is_for_prediction():
    instance = Conll2003NerReader().text_to_instance(["Peter", "lives", "in", "Brussels"])
    assert "tags" not in instance.fields
    assert instance["metadata"]["words"] == ["Peter", "lives", "in", "Brussels"]


def test_entity_types_none_accepts_other_types(tmp_path):
    path = write(tmp_path, "Foo NNP I-NP I-PRODUCT\nbar NN I-NP O\n")
    instances = list(Conll2003NerReader(entity_types=None, tag_scheme="BIO").read(path))
    assert field_of(instances[0], "tags", SequenceLabelField).labels == ["B-PRODUCT", "O"]


@pytest.mark.parametrize(
    "text, line, expected",
    [
        ("EU NNP I-NP I-ORG\nrejects VBZ O\n", 2, "expected 4 space-separated columns"),
        ("EU NNP I-NP I-ORG\n\nrejects VBZ I-VP O extra\n", 3, "found 5"),
        ("EU NNP I-NP X-ORG\n", 1, "is not IOB1"),
        ("EU NNP I-NP I-\n", 1, "is not IOB1"),
        ("EU NNP I-NP U-ORG\n", 1, "is not IOB1"),
        ("EU NNP I-NP I-FOO\n", 1, "unknown entity type 'FOO'"),
        ("-DOCSTART- -X- O O\n\n-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\n", 1, "empty document"),
        ("-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\n\n-DOCSTART- -X- O O\n\n", 5, "empty document"),
    ],
)
def test_malformed_input_names_file_and_line(tmp_path, text, line, expected):
    path = write(tmp_path, text)
    with pytest.raises(ConfigurationError) as error:
        list(Conll2003NerReader().read(path))
    assert f"{path}, line {line}:" in str(error.value)
    assert expected in str(error.value)


def test_unknown_tag_scheme_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="tag_scheme must be one of"):
        Conll2003NerReader(tag_scheme="IOBES")


def test_a_sentence_over_the_maximum_length_is_split_with_a_warning_naming_file_and_line(
    tmp_path, caplog
):
    from elmo_plugin.allennlp.tasks.ner.dataset_readers import Conll2003NerReader

    conll = tmp_path / "no_blank_lines.txt"
    rows = ["-DOCSTART- -X- -X- O", ""] + [
        f"w{i} NN I-NP {'I-PER' if i % 7 else 'O'}" for i in range(1200)
    ]
    conll.write_text("\n".join(rows) + "\n")
    with caplog.at_level("WARNING"):
        instances = list(Conll2003NerReader().read(str(conll)))
    assert [len(i["tokens"]) for i in instances] == [512, 512, 176]
    assert [t.text for i in instances for t in tokens_of(i, "tokens")] == [
        f"w{i}" for i in range(1200)
    ]
    assert (
        "no_blank_lines.txt, line 3: a sentence of 1200 tokens, over the maximum of 512"
        in caplog.text
    )
    # Each piece recoded on its own: valid BIOUL.
    assert field_of(instances[1], "tags", SequenceLabelField).labels[0] != "I-PER"
    whole = list(Conll2003NerReader(max_sentence_length=None).read(str(conll)))
    assert [len(i["tokens"]) for i in whole] == [1200]
