import pytest

from elmo_plugin.allennlp.tasks.srl.dependency_spans import (
    argument_spans,
    dependency_subtrees,
    head_labels_to_bio,
    head_labels_to_tags,
)

# "the man who left early": left (3) is a relative clause on man (1); who (2) and early (4)
# depend on left.
RELATIVE_CLAUSE_HEADS = [1, -1, 3, 1, 3]
RELATIVE_CLAUSE_LABELS = ["_", "ARG0", "R-ARG0", "V", "ARGM-TMP"]


def test_subtrees_of_a_hand_worked_tree():
    subtrees = dependency_subtrees(RELATIVE_CLAUSE_HEADS)
    assert subtrees[1] == {0, 1, 2, 3, 4}
    assert subtrees[3] == {2, 3, 4}
    assert subtrees[0] == {0}


def test_subtree_spans_cut_out_the_predicate_and_nested_arguments():
    # man's subtree holds the whole sentence; the predicate and the subtrees of who and
    # early are cut out, leaving "the man".
    tags = head_labels_to_bio(RELATIVE_CLAUSE_HEADS, 3, RELATIVE_CLAUSE_LABELS)
    assert tags == ["B-ARG0", "I-ARG0", "B-R-ARG0", "B-V", "B-ARGM-TMP"]


def test_argument_spans_of_a_projective_sentence():
    # "President Bush on Tuesday nominated two individuals": nominated (4) is the root.
    heads = [4, 0, 3, 4, -1, 6, 4]
    labels = ["ARG0", "_", "_", "ARGM-TMP", "V", "_", "ARG1"]
    assert head_labels_to_bio(heads, 4, labels) == [
        "B-ARG0",
        "I-ARG0",
        "B-ARGM-TMP",
        "I-ARGM-TMP",
        "B-V",
        "B-ARG1",
        "I-ARG1",
    ]


def test_a_non_projective_subtree_keeps_the_run_around_its_head():
    # "A hearing is scheduled on the issue today": "on the issue" depends on hearing (1)
    # across the verb, so hearing's subtree is {0, 1, 4, 5, 6}; its span is "A hearing".
    heads = [1, 3, 3, -1, 6, 6, 1, 3]
    assert argument_spans(heads, {3}, [1, 7]) == {1: (0, 1), 7: (7, 7)}


def test_multiword_predicate_parts_are_c_v_and_never_inside_spans():
    # "blow things up": the file marks the particle "V" (or "C-V") in blow's column.
    heads = [-1, 0, 0]
    assert head_labels_to_tags(0, ["V", "ARG1", "V"]) == ["V", "ARG1", "C-V"]
    assert head_labels_to_bio(heads, 0, ["V", "ARG1", "C-V"]) == ["B-V", "B-ARG1", "B-C-V"]


def test_head_tags_mark_only_head_words():
    assert head_labels_to_tags(3, RELATIVE_CLAUSE_LABELS) == [
        "O",
        "ARG0",
        "R-ARG0",
        "V",
        "ARGM-TMP",
    ]


def test_a_head_cycle_is_an_error():
    with pytest.raises(ValueError, match="HEAD cycle"):
        dependency_subtrees([1, 2, 0, -1])
