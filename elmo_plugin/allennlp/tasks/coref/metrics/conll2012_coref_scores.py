from typing import Dict, Hashable, List, Sequence, Tuple

import numpy
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric
from overrides import overrides
from scipy.optimize import linear_sum_assignment

Cluster = Sequence[Hashable]
"""A cluster: its mentions, any hashable values (the model's are `(start, end)` tuples)."""

METRICS = ("muc", "b3", "ceafe")


@Metric.register("conll2012_coref_scores")
class Conll2012CorefScores(Metric):
    """
    The CoNLL-2012 shared task's coreference scores, as its reference scorer (Pradhan et al.
    2014, `conll/reference-coreference-scorers` v8.01, `scorer.pl`) computes them: MUC, B3 and
    CEAF-e (entity-based CEAF, phi4 similarity), each precision and recall summed over the
    documents (numerators and denominators, as the scorer does with several documents), and
    the CoNLL score, the average of the three F1s.

    Every mention counts as given, singletons included, as in the reference scorer: the caller
    decides whether the clusters have singletons (the `litbank_coref` reader drops them with
    `remove_singleton_clusters`, as CoNLL-2012 has none annotated). As in the scorer, a
    response mention given twice that is a key mention counts once, at its first place (it is
    removed from later clusters, and a cluster left empty goes); a key mention given twice
    counts twice. tests/tasks/coref/test_conll2012_coref_scores.py checks these against the
    scorer's own test cases.

    allennlp-models' `conll_coref_scores` (`ConllCorefScores`, after Clark's deep-coref) is
    not ours to import (not a runtime dependency) and differs where there are singletons:
    its B3 leaves out the clusters of one mention (key and response), its CEAF-e the
    response's but not the key's; without singletons on either side the two agree (tested).
    It also takes the model's tensors, where this takes clusters, so a predictor and a test
    can score any clustering.

    `get_metric` gives `coref_precision`, `coref_recall` and `coref_f1` (the averages over
    the three metrics; `coref_f1` is the CoNLL score) and each metric's own: `muc_precision`,
    `muc_recall`, `muc_f1`, and the same for `b3` and `ceafe`; fractions in [0, 1].

    Registered as a `Metric` with name "conll2012_coref_scores".
    """

    supports_distributed = True

    def __init__(self) -> None:
        # metric -> [recall numerator, recall denominator, precision numerator, denominator]
        self._counts: Dict[str, List[float]] = {name: [0.0] * 4 for name in METRICS}

    # AllenNLP's `Metric.__call__` takes (predictions, gold_labels, mask) tensors; this one takes
    # clusters: the override cannot match its signature.
    @overrides
    def __call__(  # type: ignore[override]
        self,
        predicted_clusters: Sequence[Sequence[Cluster]],
        gold_clusters: Sequence[Sequence[Cluster]],
    ) -> None:
        """
        # Parameters

        predicted_clusters : `Sequence[Sequence[Cluster]]`
            The response: for each document of the batch, its clusters of mentions.
        gold_clusters : `Sequence[Sequence[Cluster]]`
            The key: for each document, its gold clusters.
        """
        if len(predicted_clusters) != len(gold_clusters):
            raise ValueError(
                f"got predicted clusters of {len(predicted_clusters)} documents and gold "
                f"clusters of {len(gold_clusters)}"
            )
        for response, key in zip(predicted_clusters, gold_clusters):
            for name, counts in document_counts(key, response).items():
                for index, count in enumerate(counts):
                    self._counts[name][index] += count

    @overrides
    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        metrics: Dict[str, float] = {}
        for name in METRICS:
            recall_num, recall_den, precision_num, precision_den = (
                dist_reduce_sum(count) for count in self._counts[name]
            )
            precision, recall = _ratio(precision_num, precision_den), _ratio(recall_num, recall_den)
            metrics[f"{name}_precision"] = precision
            metrics[f"{name}_recall"] = recall
            metrics[f"{name}_f1"] = _f1(precision, recall)
        for kind in ("precision", "recall", "f1"):
            metrics[f"coref_{kind}"] = sum(metrics[f"{name}_{kind}"] for name in METRICS) / 3
        if reset:
            self.reset()
        return metrics

    @overrides
    def reset(self) -> None:
        self._counts = {name: [0.0] * 4 for name in METRICS}


def document_counts(
    key: Sequence[Cluster], response: Sequence[Cluster]
) -> Dict[str, Tuple[float, float, float, float]]:
    """The reference scorer's `(recall numerator, recall denominator, precision numerator,
    precision denominator)` of MUC, B3 and CEAF-e for one document."""
    key_chains = [list(cluster) for cluster in key if len(cluster)]
    response_chains = _response_without_repeated_key_mentions(key_chains, response)
    return {
        "muc": _muc(key_chains, response_chains),
        "b3": _b3(key_chains, response_chains),
        "ceafe": _ceafe(key_chains, response_chains),
    }


def _response_without_repeated_key_mentions(
    key: List[List[Hashable]], response: Sequence[Cluster]
) -> List[List[Hashable]]:
    # scorer.pl (`IdentifMentions`) removes a response mention seen before only when it is a
    # key mention; other repeats stay.
    key_mentions = {mention for cluster in key for mention in cluster}
    seen = set()
    chains = []
    for cluster in response:
        chain = []
        for mention in cluster:
            if mention in key_mentions:
                if mention in seen:
                    continue
                seen.add(mention)
            chain.append(mention)
        if chain:
            chains.append(chain)
    return chains


def _index(chains: List[List[Hashable]]) -> Dict[Hashable, int]:
    """Each mention's chain (the last one holding it, as the scorer's `Indexa`)."""
    return {mention: i for i, chain in enumerate(chains) for mention in chain}


def _muc(
    key: List[List[Hashable]], response: List[List[Hashable]]
) -> Tuple[float, float, float, float]:
    key_index = _index(key)
    correct = 0
    for chain in response:
        for i, mention in enumerate(chain):
            entity = key_index.get(mention)
            if entity is not None and any(key_index.get(m) == entity for m in chain[i + 1 :]):
                correct += 1
    key_links = sum(len(chain) - 1 for chain in key)
    response_links = sum(len(chain) - 1 for chain in response)
    return correct, key_links, correct, response_links


def _b3(
    key: List[List[Hashable]], response: List[List[Hashable]]
) -> Tuple[float, float, float, float]:
    key_index = _index(key)
    precision_num = recall_num = 0.0
    for chain in response:
        for mention in chain:
            entity = key_index.get(mention)
            key_chain = key[entity] if entity is not None else []
            common = sum(1 for m in chain if m in key_chain)
            precision_num += common / len(chain)
            if key_chain:
                recall_num += common / len(key_chain)
    key_mentions = sum(len(chain) for chain in key)
    response_mentions = sum(len(chain) for chain in response)
    return recall_num, key_mentions, precision_num, response_mentions


def _ceafe(
    key: List[List[Hashable]], response: List[List[Hashable]]
) -> Tuple[float, float, float, float]:
    similarity = 0.0
    if key and response:
        scores = numpy.zeros((len(key), len(response)))
        for i, key_chain in enumerate(key):
            key_set = set(key_chain)
            for j, response_chain in enumerate(response):
                common = sum(1 for m in response_chain if m in key_set)
                scores[i, j] = 2 * common / (len(key_chain) + len(response_chain))
        rows, columns = linear_sum_assignment(-scores)
        similarity = float(scores[rows, columns].sum())
    return similarity, len(key), similarity, len(response)


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator) / float(denominator) if denominator else 0.0


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
