import logging
import shutil
from typing import Any, Dict

import pytest
import torch
from allennlp.data import Batch, Vocabulary
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.coref.dataset_readers import LitbankCorefReader
from elmo_plugin.allennlp.tasks.coref.dataset_readers.conll_coref_documents import (
    canonical_clusters,
    read_documents,
)
from tests.tasks.coref.coref_small_overrides import FIXTURES

BLEAK_HOUSE = FIXTURES / "conll" / "1023_bleak_house_brat.conll"
ROW = "doc\t0\t{}\t{}\t_\t{}"


def document(*sentences, name="doc"):
    """A CoNLL document of `sentences`, each a list of `(word, coreference column)`."""
    lines = [f"#begin document ({name}); part 0"]
    for sentence in sentences:
        lines += [ROW.format(i, word, coref) for i, (word, coref) in enumerate(sentence)]
        lines.append("")
    return "\n".join(lines + ["#end document"]) + "\n"


def write(tmp_path, text, name="doc.conll"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def read(path, **kwargs):
    return list(LitbankCorefReader(**kwargs).read(str(path)))


def words(instance):
    return [token.text for token in instance["text"].tokens]


TWO_SENTENCES = document(
    [("Mr.", "(0"), ("Jones", "0)"), ("came", "-"), (".", "-")],
    [("He", "(0)|(1"), ("sat", "-"), ("alone", "1)"), (".", "_")],
)


def test_reads_a_document_with_its_sentences_spans_and_cluster_labels(tmp_path):
    (instance,) = read(write(tmp_path, TWO_SENTENCES), max_span_width=3)
    assert words(instance) == "Mr. Jones came . He sat alone .".split()
    assert instance["sentence_lengths"].tensor.tolist() == [4, 4]
    spans = instance["spans"].tensor.tolist()
    # Every span of at most 3 words inside a sentence, by start and then end; none across.
    expected = [
        [s, e]
        for offset in (0, 4)
        for s in range(offset, offset + 4)
        for e in range(s, min(s + 3, offset + 4))
    ]
    assert spans == expected
    labels = dict(zip(map(tuple, spans), instance["span_labels"].tensor.tolist()))
    assert labels[(0, 1)] == labels[(4, 4)] == 0 and labels[(4, 6)] == 1
    assert sum(label >= 0 for label in labels.values()) == 3
    metadata = instance["metadata"]
    assert metadata["clusters"] == [[(0, 1), (4, 4)], [(4, 6)]]
    assert metadata["sentences"] == [["Mr.", "Jones", "came", "."], ["He", "sat", "alone", "."]]
    assert metadata["words"] == words(instance) and metadata["document"] == "doc"


def test_singletons_are_kept_or_dropped(tmp_path):
    path = write(tmp_path, TWO_SENTENCES)
    (kept,) = read(path)
    (dropped,) = read(path, remove_singleton_clusters=True)
    assert kept["metadata"]["clusters"] == [[(0, 1), (4, 4)], [(4, 6)]]
    assert dropped["metadata"]["clusters"] == [[(0, 1), (4, 4)]]
    assert dropped["span_labels"].tensor.max() == 0


def test_the_fixture_slice_reads_as_litbank_does():
    (instance,) = read(BLEAK_HOUSE)
    assert words(instance)[:6] == ["CHAPTER", "I", "In", "Chancery", "London", "."]
    assert len(words(instance)) == 203 and len(instance["sentence_lengths"].tensor) == 8
    clusters = instance["metadata"]["clusters"]
    assert [(3, 3)] in clusters and [(4, 4)] in clusters  # (0) Chancery, (1) London: singletons
    assert sum(len(cluster) for cluster in clusters) == 11


def test_a_list_of_documents_a_glob_a_directory_and_a_file_read_the_same():
    listed = read(FIXTURES / "train_docs.txt")
    assert [i["metadata"]["document"] for i in listed] == [
        "1023_bleak_house_brat",
        "1064_the_masque_of_the_red_death_brat",
    ]
    everything = [str(i) for i in read(FIXTURES / "conll")]
    assert everything == [str(i) for i in read(FIXTURES / "conll" / "*.conll")]
    assert len(everything) == 4 and str(listed[0]) in everything
    assert [str(i) for i in read(BLEAK_HOUSE)] == [str(listed[0])]


def test_listed_names_resolve_beside_the_list_too(tmp_path):
    shutil.copy(BLEAK_HOUSE, tmp_path / BLEAK_HOUSE.name)
    (tmp_path / "docs.txt").write_text(f"\n{BLEAK_HOUSE.name}\n")
    (instance,) = read(tmp_path / "docs.txt")
    assert len(instance["text"]) == 203


def test_segments_cut_between_sentences_and_keep_the_mentions_inside():
    (whole,) = read(BLEAK_HOUSE)
    segments = read(BLEAK_HOUSE, max_tokens=60)
    assert len(segments) > 2
    assert sum((words(s) for s in segments), []) == words(whole)
    assert all(len(s["text"]) <= 60 or len(s["sentence_lengths"].tensor) == 1 for s in segments)
    offsets = [s["metadata"]["offset"] for s in segments]
    assert offsets == [sum(len(s["text"]) for s in segments[:i]) for i in range(len(segments))]
    shifted = sorted(
        (start + s["metadata"]["offset"], end + s["metadata"]["offset"])
        for s in segments
        for cluster in s["metadata"]["clusters"]
        for start, end in cluster
    )
    assert shifted == sorted(m for cluster in whole["metadata"]["clusters"] for m in cluster)
    by_sentences = read(BLEAK_HOUSE, max_sentences=3)
    assert [len(s["sentence_lengths"].tensor) for s in by_sentences] == [3, 3, 2]


def test_overlapping_and_nested_mentions_and_run_together_brackets(tmp_path):
    text = document(
        [("the", "(3(5"), ("old", "-"), ("man", "5)3)|(7)"), ("'s", "(7"), ("dog", "7)")]
    )
    (instance,) = read(write(tmp_path, text))
    # entity 3 and 5 share their only mention: one cluster; 7 has two mentions.
    assert instance["metadata"]["clusters"] == [[(0, 2)], [(2, 2), (3, 4)]]
    assert canonical_clusters([[(1, 2)], [(0, 0), (1, 2)], [(5, 5)]]) == [
        [(0, 0), (1, 2)],
        [(5, 5)],
    ]


def test_text_to_instance_takes_sentences_and_leaves_the_indexers_to_apply_token_indexers():
    reader = LitbankCorefReader(max_span_width=2)
    instance = reader.text_to_instance([["He", "came"], ["She", "left", "."]], [[(0, 0), (2, 2)]])
    assert instance["text"]._token_indexers is None
    reader.apply_token_indexers(instance)
    assert instance["text"]._token_indexers
    assert instance["spans"].tensor.tolist() == [
        [0, 0],
        [0, 1],
        [1, 1],
        [2, 2],
        [2, 3],
        [3, 3],
        [3, 4],
        [4, 4],
    ]
    assert instance["span_labels"].tensor.tolist() == [0, -1, -1, 0, -1, -1, -1, -1]
    assert "span_labels" not in reader.text_to_instance([["He", "came"]])


def test_instances_batch_with_elmo_characters_and_padding():
    indexers = {"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()}
    instances = read(FIXTURES / "train_docs.txt", token_indexers=indexers, max_span_width=3)
    batch = Batch(instances)
    batch.index_instances(Vocabulary.from_instances(instances))
    # A text field's tensors are a dict of dicts, a level deeper than AllenNLP annotates.
    tensors: Dict[str, Any] = batch.as_tensor_dict()
    assert tensors["text"]["elmo"]["elmo_tokens"].shape == (2, 203, 50)
    spans, labels = tensors["spans"], tensors["span_labels"]
    assert spans.dtype == labels.dtype == torch.long
    shorter = len(instances[1]["spans"].tensor)
    assert (spans[1, shorter:] == -1).all() and (labels[1, shorter:] == -1).all()
    assert (tensors["sentence_lengths"].sum(dim=1) == torch.tensor([203, 167])).all()


@pytest.mark.parametrize(
    "rows, line, expected",
    [
        (
            ["doc\t0\t0\tA\t(1", "doc\t0\t1\tman\t-"],
            2,
            "the mention of entity 1 opened here is never closed",
        ),
        (
            ["doc\t0\t0\tA\t-", "doc\t0\t1\tman\t1)"],
            3,
            r"'1\)' closes a mention of entity 1 that no earlier row opened",
        ),
        (["doc\t0\t0\tA", "doc\t0\t1\tman\t-"], 2, "4 columns, expected at least 5"),
        (
            ["doc\t0\t0\tA\t(x)"],
            2,
            r"coreference column '\(x\)' is not CoNLL-2012 bracket notation",
        ),
        (["doc\t0\t0\tA\t-", "doc\t0\t2\tman\t-"], 3, "word number '2', expected 1"),
        (["doc\t0\t0\t \t-\t(1)"], 2, "an empty word"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path, rows, line, expected):
    path = write(
        tmp_path, "\n".join(["#begin document (doc); part 0", *rows, "#end document"]) + "\n"
    )
    with pytest.raises(ConfigurationError, match=f"doc.conll, line {line}: {expected}"):
        read(path)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("doc\t0\t0\tA\t-\n", "line 1: a row outside a document"),
        (
            "#begin document (doc); part 0\ndoc\t0\t0\tA\t-\n",
            "the document begun at line 1 has no '#end document'",
        ),
        (
            "#begin document (a); part 0\n#begin document (b); part 0\n",
            "line 2: '#begin document' inside",
        ),
        ("#end document\n", "line 1: '#end document' outside a document"),
        ("#begin document (a); part 0\n\n#end document\n", "line 1: a document without words"),
    ],
)
def test_bad_documents_name_file_and_line(tmp_path, text, expected):
    with pytest.raises(ConfigurationError, match=f"doc.conll, {expected}"):
        read(write(tmp_path, text))


def test_a_listed_file_that_does_not_exist_names_the_list_and_line(tmp_path):
    (tmp_path / "docs.txt").write_text(f"{BLEAK_HOUSE}\nmissing.conll\n")
    with pytest.raises(
        ConfigurationError,
        match=r"docs.txt, line 2: the listed document file 'missing.conll' is not found",
    ):
        read(tmp_path / "docs.txt")


def test_missing_empty_and_unmatched_paths_are_errors(tmp_path):
    with pytest.raises(ConfigurationError, match="not found.*train_data_path"):
        read(tmp_path / "absent.txt")
    with pytest.raises(ConfigurationError, match="empty.conll: no documents found"):
        read(write(tmp_path, "\n\n", "empty.conll"))
    with pytest.raises(ConfigurationError, match="no file matches"):
        read(tmp_path / "nowhere" / "*.conll")
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(ConfigurationError, match=r"has no \*.conll file"):
        read(tmp_path / "empty_dir")


def test_bytes_that_are_not_utf8_name_file_and_line(tmp_path):
    path = tmp_path / "latin1.conll"
    path.write_bytes(TWO_SENTENCES.encode().replace(b"came", b"caf\xe9"))
    with pytest.raises(ConfigurationError, match="latin1.conll, line 4: not UTF-8"):
        read(path)


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_a_bom_and_cr_line_endings_read_as_lf(tmp_path, ending):
    path = tmp_path / "crlf.conll"
    path.write_bytes(b"\xef\xbb\xbf" + TWO_SENTENCES.replace("\n", ending).encode())
    assert [str(i) for i in read(path)] == [str(i) for i in read(write(tmp_path, TWO_SENTENCES))]


def test_an_over_long_sentence_is_split_with_a_warning_naming_file_and_line(tmp_path, caplog):
    long_sentence = [(f"w{i}", "-") for i in range(30)]
    path = write(tmp_path, document([("A", "-")], long_sentence))
    with caplog.at_level(logging.WARNING):
        (instance,) = read(path, max_sentence_length=8)
    assert instance["sentence_lengths"].tensor.tolist() == [1, 8, 8, 8, 6]
    assert "doc.conll, line 4: a sentence of 30 tokens, over the maximum of 8" in caplog.text


def test_parameters_below_one_are_configuration_errors():
    for name in ("max_span_width", "max_sentences", "max_tokens", "max_sentence_length"):
        with pytest.raises(ConfigurationError, match=f"{name} must be at least 1"):
            settings: Dict[str, Any] = {name: 0}
            LitbankCorefReader(**settings)


def test_the_reference_scorers_documents_read_with_their_entities_in_its_order():
    # TC-A-8: entity 1 opens before entity 3 on the same row; the scorer numbers them so.
    with open(FIXTURES / "reference_scorer" / "TC-A-8.response") as handle:
        (doc,) = read_documents(handle)
    assert doc.name == "LuoTestCase" and doc.part == ""
    assert doc.clusters == [
        [(0, 1)],
        [(3, 6), (9, 9), (10, 10)],
        [(3, 6), (13, 13)],
        [(11, 12), (15, 15)],
    ]


def test_reads_the_shared_splits(shared_data):
    reader = LitbankCorefReader(remove_singleton_clusters=True)
    counts = {}
    for split in ("train", "dev", "test"):
        instances = list(reader.read(f"{shared_data}/litbank_coref/{split}_docs.txt"))
        counts[split] = (len(instances), sum(len(i["text"]) for i in instances))
    # The README's documents and tokens (section 11).
    assert counts == {"train": (80, 165871), "dev": (10, 22864), "test": (10, 21797)}


def test_an_existing_path_with_glob_characters_is_taken_literally(tmp_path):
    shutil.copy(BLEAK_HOUSE, tmp_path / "train[1].conll")
    (instance,) = read(tmp_path / "train[1].conll")
    assert len(instance["text"]) == 203
    (tmp_path / "data[1]").mkdir()
    shutil.copy(BLEAK_HOUSE, tmp_path / "data[1]" / BLEAK_HOUSE.name)
    (instance,) = read(tmp_path / "data[1]")
    assert len(instance["text"]) == 203
