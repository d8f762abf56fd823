"""
The answer comparison of the official SQuAD v1.1 script (`evaluate-v1.1.py`): answers are
normalised (lowercased, punctuation and the articles a/an/the removed, whitespace collapsed),
then scored by exact match and by bag-of-tokens F1; a prediction gets its best score over the
reference answers. allennlp-models' `rc/tools/squad.py` is the SQuAD 2.0 script's, which scores
two empty answers F1 1 (0 here), and is not importable at run time (see `SquadV1EmF1`).
"""

import re
import string
from collections import Counter
from typing import Callable, List

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    text = text.lower()
    text = "".join(character for character in text if character not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match_score(prediction: str, reference: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(reference))


def f1_score(prediction: str, reference: str) -> float:
    prediction_tokens = normalize_answer(prediction).split()
    reference_tokens = normalize_answer(reference).split()
    overlap = sum((Counter(prediction_tokens) & Counter(reference_tokens)).values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(prediction_tokens)
    recall = overlap / len(reference_tokens)
    return 2 * precision * recall / (precision + recall)


def max_over_references(
    score: Callable[[str, str], float], prediction: str, references: List[str]
) -> float:
    return max(score(prediction, reference) for reference in references)
