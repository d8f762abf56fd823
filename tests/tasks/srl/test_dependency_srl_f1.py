import pytest

from elmo_plugin.allennlp.tasks.srl.metrics import DependencySrlF1


def test_hand_worked_precision_recall_f1():
    metric = DependencySrlF1()
    # Predicate 1: gold (1, 0, ARG0) and (1, 2, ARG1); predicted ARG0 right, ARG1 on the
    # wrong head, plus a spurious ARGM-TMP: 1 correct of 3 predicted, of 2 gold.
    metric(
        [["ARG0", "V", "O", "ARG1", "ARGM-TMP"]],
        [["ARG0", "V", "ARG1", "O", "O"]],
        [1],
    )
    # Predicate 3 of another sentence: gold (3, 0, ARG1); predicted right role on the
    # right head: 1 correct of 1 predicted, of 1 gold.
    metric([["ARG1", "O", "O", "V"]], [["ARG1", "O", "O", "V"]], [3])
    scores = metric.get_metric(reset=True)
    precision, recall = 2 / 4, 2 / 3
    assert scores["precision-overall"] == pytest.approx(precision)
    assert scores["recall-overall"] == pytest.approx(recall)
    assert scores["f1-measure-overall"] == pytest.approx(
        2 * precision * recall / (precision + recall)
    )
    assert metric.get_metric()["f1-measure-overall"] == 0.0  # reset


def test_a_wrong_role_on_the_right_head_is_wrong_and_v_is_not_scored():
    metric = DependencySrlF1()
    metric([["ARG1", "V", "C-V"]], [["ARG0", "V", "O"]], [1])
    scores = metric.get_metric()
    assert scores["precision-overall"] == 0.0 and scores["recall-overall"] == 0.0
    metric2 = DependencySrlF1(ignore_classes=["V", "C-V"])
    metric2([["ARG0", "V", "C-V"]], [["ARG0", "V", "O"]], [1])
    assert metric2.get_metric()["precision-overall"] == 1.0


def test_mismatched_inputs_are_errors():
    with pytest.raises(ValueError, match="one of each per predicate"):
        DependencySrlF1()([["O"]], [["O"], ["O"]], [0])
    with pytest.raises(ValueError, match="differ in length"):
        DependencySrlF1()([["O", "V"]], [["V"]], [0])
