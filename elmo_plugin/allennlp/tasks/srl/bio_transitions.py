"""Hard BIO constraints for Viterbi decoding of softmax tag scores."""

from typing import Dict, Tuple

import torch
from allennlp.modules.conditional_random_field import allowed_transitions


def bio_transition_constraints(labels: Dict[int, str]) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    A `(num_tags, num_tags)` transition matrix and a `(num_tags,)` start vector for
    `allennlp.nn.util.viterbi_decode`: `0` where BIO allows a move, `-inf` where it does not
    (`I-X` only after `B-X` or `I-X`, and never first).
    """
    num_tags = len(labels)
    start_tag = num_tags
    transitions = torch.full((num_tags, num_tags), float("-inf"))
    start = torch.full((num_tags,), float("-inf"))
    for from_tag, to_tag in allowed_transitions("BIO", labels):
        if from_tag < num_tags and to_tag < num_tags:
            transitions[from_tag, to_tag] = 0.0
        elif from_tag == start_tag and to_tag < num_tags:
            start[to_tag] = 0.0
    return transitions, start
