import json
import logging
from pathlib import Path
from typing import Any, Dict

import pytest
from allennlp.data import Batch, Vocabulary
from allennlp.data.fields import LabelField
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.snli.dataset_readers import SnliJsonlReader
from tests import paths
from tests.fields import field_of, metadata_of, tokens_of

FIXTURES = paths.FIXTURES / "snli"
SHARED_SPLIT = paths.SHARED_DATA / "snli_1.0" / "split"


def write_lines(path: Path, lines) -> str:
    path.write_bytes(
        b"".join(line if isinstance(line, bytes) else line.encode() + b"\n" for line in lines)
    )
    return str(path)


def pair(label=None, premise="A man sleeps .", hypothesis="A person rests .") -> str:
    record = {"sentence1": premise, "sentence2": hypothesis}
    if label is not None:
        record["gold_label"] = label
    return json.dumps(record)


def test_reads_premise_hypothesis_label_and_tokens():
    instances = list(SnliJsonlReader().read(FIXTURES / "train.jsonl"))
    assert len(instances) == 40
    first = instances[0]
    assert [t.text for t in tokens_of(first, "premise")] == (
        "Two women are embracing while holding to go packages .".split()
    )
    assert [t.text for t in tokens_of(first, "hypothesis")][:3] == ["The", "sisters", "are"]
    assert field_of(first, "label", LabelField).label == "neutral"
    assert metadata_of(first)["hypothesis_tokens"][-1] == "."
    assert {field_of(i, "label", LabelField).label for i in instances} == {
        "entailment",
        "neutral",
        "contradiction",
    }


def test_skips_and_counts_pairs_without_gold_label(tmp_path, caplog):
    path = write_lines(
        tmp_path / "pairs.jsonl",
        [pair("entailment"), pair("-"), "", pair(None), pair("contradiction")],
    )
    reader = SnliJsonlReader()
    with caplog.at_level(logging.INFO):
        instances = list(reader.read(path))
    assert [field_of(i, "label", LabelField).label for i in instances] == [
        "entailment",
        "contradiction",
    ]
    assert reader.num_skipped_without_label == 2
    assert "skipped 2 pairs without a gold label" in caplog.text


def test_configured_indexers_include_elmo_characters():
    reader = SnliJsonlReader(
        token_indexers={"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()}
    )
    instances = list(reader.read(FIXTURES / "dev.jsonl"))
    batch = Batch(instances)
    batch.index_instances(Vocabulary.from_instances(instances))
    # A text field's tensors are a dict of dicts, a level deeper than AllenNLP annotates.
    tensors: Dict[str, Any] = batch.as_tensor_dict()
    longest = max(len(tokens_of(i, "premise")) for i in instances)
    assert tensors["premise"]["elmo"]["elmo_tokens"].shape == (len(instances), longest, 50)
    assert tensors["label"].shape == (len(instances),)


@pytest.mark.parametrize(
    "bad_line, expected",
    [
        ('{"gold_label": "neutral", "sentence1": "A b .",', "expected one JSON object a line"),
        ('["neutral", "A b .", "C d ."]', "expected a JSON object, got list"),
        ('{"gold_label": "neutral", "sentence1": "A b ."}', 'missing field "sentence2"'),
        (
            '{"gold_label": "neutral", "sentence1": 3, "sentence2": "C ."}',
            '"sentence1" should be a string',
        ),
        (
            '{"gold_label": "neutral", "sentence1": "  ", "sentence2": "C ."}',
            "sentence1: expected a sentence",
        ),
        (b'{"gold_label": "neutral", "sentence1": "caf\xe9", "sentence2": "C ."}\n', "not UTF-8"),
    ],
)
def test_malformed_input_names_file_and_line(tmp_path, bad_line, expected):
    path = write_lines(tmp_path / "bad.jsonl", [pair("entailment"), bad_line])
    with pytest.raises(ConfigurationError) as error:
        list(SnliJsonlReader().read(path))
    assert f"{path}, line 2" in str(error.value)
    assert expected in str(error.value)


@pytest.mark.skipif(not SHARED_SPLIT.exists(), reason="../shared/data is absent")
def test_reads_the_fixed_train_split():
    reader = SnliJsonlReader()
    assert sum(1 for _ in reader.read(SHARED_SPLIT / "train.jsonl")) == 8842
    assert reader.num_skipped_without_label == 0


def test_an_over_long_premise_or_hypothesis_is_cut_with_a_warning_naming_file_and_line(
    tmp_path, caplog
):
    long_premise = " ".join(f"p{i}" for i in range(600))
    long_hypothesis = " ".join(f"h{i}" for i in range(513))
    path = write_lines(
        tmp_path / "long.jsonl",
        [
            pair("entailment"),
            pair("neutral", long_premise),
            pair("neutral", hypothesis=long_hypothesis),
        ],
    )
    with caplog.at_level(logging.WARNING):
        instances = list(SnliJsonlReader().read(path))
    lengths = [(len(i["premise"]), len(i["hypothesis"])) for i in instances]
    assert lengths == [(4, 4), (512, 4), (4, 512)]
    assert [t.text for t in tokens_of(instances[1], "premise")] == long_premise.split()[:512]
    assert metadata_of(instances[1])["premise_tokens"] == long_premise.split()[:512]
    assert (
        "long.jsonl, line 2: sentence1: a sentence of 600 tokens, over the maximum of 512: "
        "cut to its first 512" in caplog.text
    )
    assert "long.jsonl, line 3: sentence2: a sentence of 513 tokens, over the max" in caplog.text
    whole = list(SnliJsonlReader(max_sentence_length=None).read(path))
    lengths = [(len(i["premise"]), len(i["hypothesis"])) for i in whole]
    assert lengths == [(4, 4), (600, 4), (4, 513)]


def test_max_sentence_length_below_one_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="max_sentence_length must be at least 1 or None"):
        SnliJsonlReader(max_sentence_length=0)
