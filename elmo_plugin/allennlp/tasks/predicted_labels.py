"""
A classifier's predictions by label name (`bcn_classifier`, `esim_nli`): each row's most
probable label, and a dict from every label of the namespace to its probability.
"""

from typing import Dict, List, Tuple

import torch
from allennlp.data import Vocabulary


def predicted_labels(
    vocab: Vocabulary, namespace: str, probabilities: torch.Tensor
) -> Tuple[List[str], List[Dict[str, float]]]:
    """The most probable label of each row of `probabilities` `(batch_size, num_labels)` (in
    the order of `namespace`), and each row as a dict from label to probability."""
    names = [
        vocab.get_token_from_index(index, namespace=namespace)
        for index in range(vocab.get_vocab_size(namespace))
    ]
    rows = probabilities.detach().cpu()
    labels = [names[index] for index in rows.argmax(dim=-1).tolist()]
    return labels, [dict(zip(names, row)) for row in rows.tolist()]
