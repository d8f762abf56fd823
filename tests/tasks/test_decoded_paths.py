from typing import cast

import pytest
import torch
from allennlp.data import Vocabulary
from allennlp.training.metrics import SpanBasedF1Measure

from elmo_plugin.allennlp.tasks.decoded_paths import decoded_paths_to_one_hot

TAGS = ["O", "B-PER", "I-PER", "B-LOC"]


def test_one_hot_marks_each_path_tag_and_nothing_past_the_path():
    scores = torch.randn(2, 4, 5, dtype=torch.float64)
    one_hot = decoded_paths_to_one_hot([[1, 2, 0, 4], [3, 3]], scores)
    assert one_hot.dtype == scores.dtype and one_hot.shape == scores.shape
    assert one_hot[0].argmax(dim=-1).tolist() == [1, 2, 0, 4]
    assert one_hot[1, :2].argmax(dim=-1).tolist() == [3, 3]
    assert one_hot.sum(dim=-1).tolist() == [[1, 1, 1, 1], [1, 1, 0, 0]]


def test_span_f1_scores_the_paths_and_not_the_scores():
    vocab = Vocabulary(tokens_to_add={"labels": TAGS}, non_padded_namespaces=["labels"])
    tag_ids = {tag: vocab.get_token_index(tag, "labels") for tag in TAGS}
    gold = torch.tensor([[tag_ids["B-PER"], tag_ids["I-PER"], tag_ids["O"], tag_ids["B-LOC"]]])
    mask = cast(torch.BoolTensor, torch.ones_like(gold, dtype=torch.bool))  # typed Tensor by torch
    # Scores whose argmax is all "O": a metric given them would find no entity.
    scores = torch.zeros(1, 4, len(TAGS))
    scores[..., tag_ids["O"]] = 1.0
    metric = SpanBasedF1Measure(vocab, "labels")
    metric(decoded_paths_to_one_hot(gold.tolist(), scores), gold, mask)
    assert metric.get_metric()["f1-measure-overall"] == pytest.approx(1.0)
