import logging
from typing import Any, Dict

import pytest
from allennlp.data import Batch, Vocabulary
from allennlp.data.fields import LabelField, SpanField, TextField
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.sentiment.dataset_readers import SstTreesReader
from elmo_plugin.allennlp.tasks.sentiment.dataset_readers.sst_trees import parse_tree, unescape_ptb
from tests.fields import field_of, metadata_of
from tests.tasks.sentiment.sst_small_overrides import FIXTURES

TREE = "(3 (2 It) (4 (3 (2 a) (4 (3 lovely) (2 film))) (2 .)))"


def write(tmp_path, text, name="trees.txt"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def words(instance):
    return [token.text for token in instance["tokens"].tokens]


def test_reads_the_root_of_every_tree_with_its_label():
    instances = list(SstTreesReader().read(FIXTURES / "dev.txt"))
    assert [field_of(i, "label", LabelField).label for i in instances] == ["0", "1", "2", "3", "4"]
    assert words(instances[0]) == "It 's like watching a nightmare made flesh .".split()
    assert metadata_of(instances[0])["words"] == words(instances[0])
    assert len(list(SstTreesReader().read(FIXTURES / "train.txt"))) == 16


def test_subtrees_are_every_labelled_node_root_first_in_pre_order(tmp_path):
    instances = list(SstTreesReader(use_subtrees=True).read(write(tmp_path, TREE + "\n")))
    phrases = [(field_of(i, "label", LabelField).label, " ".join(words(i))) for i in instances]
    assert phrases == [
        ("3", "It a lovely film ."),
        ("2", "It"),
        ("4", "a lovely film ."),
        ("3", "a lovely film"),
        ("2", "a"),
        ("4", "lovely film"),
        ("3", "lovely"),
        ("2", "film"),
        ("2", "."),
    ]


@pytest.mark.parametrize(
    "granularity, labels",
    [
        ("5-class", ["0", "1", "2", "3", "4"]),
        ("3-class", ["0", "0", "1", "2", "2"]),
        ("2-class", ["0", "0", "1", "1"]),
    ],
)
def test_granularity_maps_the_labels_as_sst_tokens_does(granularity, labels):
    instances = list(SstTreesReader(granularity=granularity).read(FIXTURES / "dev.txt"))
    assert [field_of(i, "label", LabelField).label for i in instances] == labels


def test_an_unknown_granularity_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="granularity must be one of"):
        SstTreesReader(granularity="7-class")


def test_ptb_escapes_are_undone_and_a_no_break_space_stays_in_its_word(tmp_path):
    tree = "(2 (1 -LRB-) (2 (2 2\xa01\\/2) (2 (2 \\*) (3 -RRB-))))\n"
    (instance,) = SstTreesReader().read(write(tmp_path, tree))
    assert words(instance) == ["(", "2\xa01/2", "*", ")"]
    (kept,) = SstTreesReader(unescape_ptb=False).read(write(tmp_path, tree))
    assert words(kept) == ["-LRB-", "2\xa01\\/2", "\\*", "-RRB-"]
    assert unescape_ptb("-LSB-") == "[" and unescape_ptb("word") == "word"


def test_a_deep_tree_parses_without_recursion():
    depth = 50_000
    words_, phrases = parse_tree("(2 " * depth + "w" + ")" * depth)
    assert words_ == ["w"] and len(phrases) == depth and phrases[-1].end == 1


@pytest.mark.parametrize(
    "bad, expected",
    [
        ("(3 (2 It) (4 film)", "1 unclosed '\\('"),
        ("(3 (2 It)) (2 .)", "text after the tree's end"),
        ("(3 (2 It) (4 film)))", "text after the tree's end"),
        ("(7 (2 It) (4 film))", "node label '7' .* is not a sentiment label"),
        ("(3 (2 It) (4))", "node ending at column 13 has no words"),
        ("It is a film", "word 'It' outside the tree"),
        ("(3 (2 It) (", "the line ends after '\\('"),
        (")", "unbalanced '\\)'"),
    ],
)
def test_a_malformed_tree_names_file_and_line(tmp_path, bad, expected):
    path = write(tmp_path, TREE + "\n\n" + bad + "\n")
    with pytest.raises(ConfigurationError, match=f"trees.txt, line 3: {expected}"):
        list(SstTreesReader().read(path))


def test_a_blank_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(ConfigurationError, match="blank.txt: no trees found"):
        list(SstTreesReader().read(write(tmp_path, "\n \n", "blank.txt")))


def test_a_missing_file_names_the_path_and_the_overrides(tmp_path):
    with pytest.raises(ConfigurationError, match="not found.*train_data_path"):
        list(SstTreesReader().read(str(tmp_path / "absent.txt")))


def test_bytes_that_are_not_utf8_name_file_and_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(TREE.encode() + b"\n(2 (2 clich\xe9))\n")
    with pytest.raises(ConfigurationError, match="latin1.txt, line 2: not UTF-8"):
        list(SstTreesReader().read(str(path)))


def test_an_over_long_sentence_is_cut_with_a_warning_naming_file_and_line(tmp_path, caplog):
    long_tree = "(2 " + " ".join(f"(2 w{i})" for i in range(20)) + ")"
    path = write(tmp_path, TREE + "\n" + long_tree + "\n")
    with caplog.at_level(logging.WARNING):
        instances = list(SstTreesReader(max_sentence_length=8).read(path))
    assert [len(i["tokens"]) for i in instances] == [5, 8]
    assert "trees.txt, line 2: a sentence of 20 tokens, over the maximum of 8" in caplog.text
    with pytest.raises(ConfigurationError, match="max_sentence_length must be at least 1"):
        SstTreesReader(max_sentence_length=0)


def test_text_to_instance_takes_words_and_leaves_the_indexers_to_apply_token_indexers():
    reader = SstTreesReader()
    instance = reader.text_to_instance(["A", "fine", "film"])
    assert "label" not in instance and instance["tokens"]._token_indexers is None
    reader.apply_token_indexers(instance)
    assert instance["tokens"]._token_indexers
    assert reader.text_to_instance(["Dull"], "2") is not None
    assert SstTreesReader(granularity="2-class").text_to_instance(["So-so"], "2") is None
    with pytest.raises(ConfigurationError, match="sentiment '9' is not an SST label"):
        reader.text_to_instance(["Dull"], "9")


def test_elmo_characters_index_the_words():
    reader = SstTreesReader(
        token_indexers={"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()}
    )
    instances = list(reader.read(FIXTURES / "dev.txt"))
    batch = Batch(instances)
    batch.index_instances(Vocabulary.from_instances(instances))
    # A text field's tensors are a dict of dicts, a level deeper than AllenNLP annotates.
    tensors: Dict[str, Any] = batch.as_tensor_dict()
    longest = max(len(i["tokens"]) for i in instances)
    assert tensors["tokens"]["elmo"]["elmo_tokens"].shape == (5, longest, 50)
    assert tensors["label"].shape == (5,)


def elmo_reader(**kwargs) -> SstTreesReader:
    indexers = {"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()}
    return SstTreesReader(token_indexers=indexers, use_subtrees=True, **kwargs)


def context_words(instance):
    return [token.text for token in field_of(instance, "elmo_context", TextField).tokens]


def span_of(instance):
    span = field_of(instance, "phrase_span", SpanField)
    return span.span_start, span.span_end


def indexer_keys(instance, field):
    return set(field_of(instance, field, TextField)._token_indexers or {})


def test_phrases_in_context_give_each_phrase_its_sentence_and_where_it_is(tmp_path):
    reader = elmo_reader(phrases_in_context=True)
    instances = list(reader.read(write(tmp_path, TREE + "\n")))
    sentence = "It a lovely film .".split()
    for instance in instances:
        start, end = span_of(instance)
        assert context_words(instance) == sentence
        assert sentence[start : end + 1] == words(instance)
    assert span_of(instances[5]) == (2, 3)
    # One field a sentence: a copy a phrase took 16.7 GB for SST's training phrases.
    assert all(i["elmo_context"] is instances[0]["elmo_context"] for i in instances)
    # ELMo's ids index the sentence only; the phrase keeps the other indexers.
    reader.apply_token_indexers(instances[5])
    assert indexer_keys(instances[5], "tokens") == {"tokens"}
    assert indexer_keys(instances[5], "elmo_context") == {"elmo"}
    # Without subtrees (dev and test), sentences are read as before.
    assert "elmo_context" not in next(iter(SstTreesReader().read(write(tmp_path, TREE))))


def test_a_phrase_of_an_over_long_sentence_gets_a_window_that_holds_it(tmp_path):
    long_tree = "(2 " + " ".join(f"(2 w{i})" for i in range(20)) + ")"
    instances = list(
        elmo_reader(phrases_in_context=True, max_sentence_length=8).read(
            write(tmp_path, long_tree + "\n")
        )
    )
    last_word = instances[-1]  # w19
    assert context_words(last_word) == [f"w{i}" for i in range(12, 20)]
    assert span_of(last_word) == (7, 7)
    assert context_words(instances[1]) == [f"w{i}" for i in range(8)]  # w0


def test_phrases_in_context_need_the_elmo_indexer():
    with pytest.raises(ConfigurationError, match="phrases_in_context needs an ELMo token indexer"):
        SstTreesReader(use_subtrees=True, phrases_in_context=True)


def test_reads_the_shared_splits(shared_data):
    counts = {}
    for split in ("train", "dev", "test"):
        instances = SstTreesReader().read(f"{shared_data}/sst/trees/{split}.txt")
        counts[split] = sum(1 for _ in instances)
    assert counts == {"train": 8544, "dev": 1101, "test": 2210}  # the README's counts


@pytest.mark.parametrize("use_subtrees", [False, True])
def test_a_file_with_nothing_to_read_in_the_granularity_names_file_and_setting(
    tmp_path, use_subtrees
):
    path = write(tmp_path, "(2 (2 It) (2 is))\n(2 (2 A) (2 film))\n", "neutral.txt")
    reader = SstTreesReader(granularity="2-class", use_subtrees=use_subtrees)
    with pytest.raises(ConfigurationError, match=r"neutral\.txt: no .*'2-class'.*2 trees"):
        list(reader.read(path))
    assert len(list(SstTreesReader(granularity="3-class").read(path))) == 2
