"""A conditional random field whose training cost grows linearly with the sentence length."""

import torch
from allennlp.modules import ConditionalRandomField
from allennlp.nn import util
from overrides import overrides


class LinearTimeCrf(ConditionalRandomField):
    """
    AllenNLP's `ConditionalRandomField` (same parameters, same values, same Viterbi decoding)
    whose log-likelihood has a backward pass linear in the sequence length.

    AllenNLP's takes `logits[i]` for each time step; the backward pass of each such indexing
    writes a zero tensor the size of all the steps, so one sentence of `n` tokens costs `n^2`
    (a 10,000-token line, what a CoNLL file that lost its blank lines gives, took over ten
    minutes). Here the steps are taken with one `unbind(0)` (one backward for all of them) and
    the score of the gold path is computed for all steps at once.
    """

    @overrides
    def _input_likelihood(
        self, logits: torch.Tensor, transitions: torch.Tensor, mask: torch.BoolTensor
    ) -> torch.Tensor:
        batch_size, _, num_tags = logits.size()
        steps = logits.transpose(0, 1).unbind(0)
        masks = mask.transpose(0, 1).unbind(0)
        alpha = steps[0]
        if self.include_start_end_transitions:
            alpha = self.start_transitions.view(1, num_tags) + alpha
        transition_scores = transitions.view(1, num_tags, num_tags)
        for emit_scores, step_mask in zip(steps[1:], masks[1:]):
            inner = (
                alpha.view(batch_size, num_tags, 1)
                + emit_scores.view(batch_size, 1, num_tags)
                + transition_scores
            )
            alpha = util.logsumexp(inner, 1) * step_mask.view(batch_size, 1) + alpha * (
                ~step_mask
            ).view(batch_size, 1)
        if self.include_start_end_transitions:
            alpha = alpha + self.end_transitions.view(1, num_tags)
        return util.logsumexp(alpha)

    @overrides
    def _joint_likelihood(
        self,
        logits: torch.Tensor,
        transitions: torch.Tensor,
        tags: torch.Tensor,
        mask: torch.BoolTensor,
    ) -> torch.Tensor:
        emit_scores = logits.gather(2, tags.unsqueeze(2)).squeeze(2)  # (batch, steps)
        transition_scores = transitions[tags[:, :-1], tags[:, 1:]]  # (batch, steps - 1)
        score = (transition_scores * mask[:, 1:]).sum(1) + (emit_scores * mask).sum(1)
        if self.include_start_end_transitions:
            last_tags = tags.gather(1, (mask.sum(1).long() - 1).unsqueeze(1)).squeeze(1)
            score = score + self.start_transitions[tags[:, 0]] + self.end_transitions[last_tags]
        return score
