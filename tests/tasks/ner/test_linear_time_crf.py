"""`LinearTimeCrf`: AllenNLP's CRF likelihood, with a backward pass linear in the length."""

import pytest
import torch
from allennlp.modules import ConditionalRandomField
from allennlp.modules.conditional_random_field import allowed_transitions

from elmo_plugin.allennlp.tasks.ner.models.linear_time_crf import LinearTimeCrf

LABELS = {
    0: "O",
    1: "B-PER",
    2: "I-PER",
    3: "L-PER",
    4: "U-PER",
    5: "B-LOC",
    6: "I-LOC",
    7: "L-LOC",
    8: "U-LOC",
}


def _crfs(include_start_end: bool):
    torch.manual_seed(0)
    ours = LinearTimeCrf(len(LABELS), allowed_transitions("BIOUL", LABELS), include_start_end)
    for parameter in ours.parameters():
        torch.nn.init.normal_(parameter)
    theirs = ConditionalRandomField(
        len(LABELS), allowed_transitions("BIOUL", LABELS), include_start_end
    )
    theirs.load_state_dict(ours.state_dict())
    return ours, theirs


@pytest.mark.parametrize("include_start_end", [True, False])
def test_same_log_likelihood_and_gradients_as_allennlp(include_start_end):
    ours, theirs = _crfs(include_start_end)
    torch.manual_seed(1)
    logits = torch.randn(5, 13, len(LABELS))
    tags = torch.randint(len(LABELS), (5, 13))
    lengths = torch.tensor([13, 1, 7, 12, 2])
    mask = torch.arange(13).unsqueeze(0) < lengths.unsqueeze(1)
    results = []
    for crf in (ours, theirs):
        inputs = logits.clone().requires_grad_()
        value = crf(inputs, tags, mask)
        value.backward()
        results.append((value, inputs.grad, crf.transitions.grad))
    for mine, reference in zip(*results):
        assert torch.allclose(mine, reference, rtol=1e-6, atol=1e-5)
    assert ours.viterbi_tags(logits, mask) == theirs.viterbi_tags(logits, mask)


def _zero_filled_elements(crf, length: int) -> int:
    """Elements written by `aten::zero_` in one forward and backward pass over a sentence."""
    logits = torch.randn(1, length, len(LABELS), requires_grad=True)
    tags = torch.randint(len(LABELS), (1, length))
    with torch.profiler.profile(record_shapes=True) as profile:
        crf(logits, tags).backward()
    total = 0
    for event in profile.events():
        if event.name == "aten::zero_" and event.input_shapes and event.input_shapes[0]:
            total += torch.Size(event.input_shapes[0]).numel()
    return total


def test_backward_work_grows_linearly_with_the_length():
    ours, theirs = _crfs(True)
    ours_short, ours_long = _zero_filled_elements(ours, 200), _zero_filled_elements(ours, 400)
    assert ours_long <= 2.5 * max(ours_short, 1)
    # AllenNLP's: a full-size zero tensor per step, four times the work for twice the length.
    theirs_short, theirs_long = _zero_filled_elements(theirs, 200), _zero_filled_elements(
        theirs, 400
    )
    assert theirs_long > 3.5 * theirs_short
    assert theirs_long > 20 * max(ours_long, 1)
