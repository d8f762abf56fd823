"""`conll2012_coref_scores` against the CoNLL-2012 reference scorer on its own test cases
(fixtures/coref/reference_scorer: the key and response files, the counts `scorer.pl` v8.01 gives
for them, and below the values its authors wrote in `test/CorefMetricTestConfig.pm`), and against
allennlp-models' `ConllCorefScores` where the two must agree."""

import json
import random
from typing import Dict, List

import pytest

from elmo_plugin.allennlp.tasks.coref.dataset_readers.conll_coref_documents import read_documents
from elmo_plugin.allennlp.tasks.coref.metrics import Conll2012CorefScores, CorefMentionRecall
from elmo_plugin.allennlp.tasks.coref.metrics.conll2012_coref_scores import document_counts
from tests.paths import FIXTURES

CASES = FIXTURES / "coref" / "reference_scorer"
SCORER_COUNTS = json.loads((CASES / "scorer_counts.json").read_text())
OUR_NAMES = {"muc": "muc", "bcub": "b3", "ceafe": "ceafe"}

# test/CorefMetricTestConfig.pm: [recall, precision, F1] as the scorer's authors expect them
# (the file rounds some to 5 digits; metrics it leaves out are not listed).
AUTHORS_VALUES: Dict[str, Dict[str, List[float]]] = {
    "TC-A-1": {"muc": [1, 1, 1], "bcub": [6 / 6, 6 / 6, 1], "ceafe": [1, 1, 1]},
    "TC-A-2": {
        "muc": [1 / 3, 1 / 1, 0.5],
        "bcub": [(7 / 3) / 6, 3 / 3, 14 / 25],
        "ceafe": [0.6, 0.9, 0.72],
    },
    "TC-A-3": {
        "muc": [3 / 3, 3 / 5, 0.75],
        "bcub": [6 / 6, (4 + 7 / 12) / 9, 110 / 163],
        "ceafe": [0.88571, 0.66429, 0.75918],
    },
    "TC-A-4": {
        "muc": [1 / 3, 1 / 3, 1 / 3],
        "bcub": [
            (3 + 1 / 3) / 6,
            (1 + 4 / 3 + 1 / 2) / 7,
            2 * (5 / 9) * (17 / 42) / ((5 / 9) + (17 / 42)),
        ],
        "ceafe": [0.73333, 0.55, 0.62857],
    },
    "TC-A-5": {
        "muc": [1 / 3, 1 / 4, 2 / 7],
        "bcub": [(3 + 1 / 3) / 6, 2.5 / 8, 2 * (5 / 9) * (5 / 16) / ((5 / 9) + (5 / 16))],
        "ceafe": [0.68889, 0.51667, 0.59048],
    },
    "TC-A-6": {
        "muc": [1 / 3, 1 / 4, 2 / 7],
        "bcub": [
            (10 / 3) / 6,
            (1 + 4 / 3 + 1 / 2) / 8,
            2 * (5 / 9) * (17 / 48) / ((5 / 9) + (17 / 48)),
        ],
        "ceafe": [0.73333, 0.55, 0.62857],
    },
    # repeated response mentions, removed as the scorer does.
    **{
        f"TC-A-{n}": {
            "muc": [1 / 3, 1 / 3, 1 / 3],
            "bcub": [
                (10 / 3) / 6,
                (1 + 4 / 3 + 1 / 2) / 7,
                2 * (5 / 9) * (17 / 42) / ((5 / 9) + (17 / 42)),
            ],
            "ceafe": [0.73333, 0.55, 0.62857],
        }
        for n in (7, 8, 9)
    },
    "TC-A-10": {"muc": [0, 0, 0], "bcub": [3 / 6, 6 / 6, 2 / 3]},
    "TC-A-11": {
        "muc": [3 / 3, 3 / 5, 6 / 8],
        "bcub": [6 / 6, (1 / 6 + 2 * 2 / 6 + 3 * 3 / 6) / 6, 14 / 25],
    },
    "TC-A-12": {
        "muc": [0, 0, 0],
        "bcub": [(1 + 1 / 2 + 2 / 3) / 6, 4 / 7, 2 * (13 / 36) * (4 / 7) / ((13 / 36) + (4 / 7))],
    },
    "TC-A-13": {
        "muc": [1 / 3, 1 / 6, 2 / 9],
        "bcub": [
            (1 + 1 / 2 + 2 * 2 / 3) / 6,
            (1 / 7 + 1 / 7 + 2 * 2 / 7) / 7,
            2 * (17 / 36) * (6 / 49) / ((17 / 36) + (6 / 49)),
        ],
    },
    "TC-D-1": {
        "muc": [9 / 9, 9 / 10, 2 * (9 / 9) * (9 / 10) / (9 / 9 + 9 / 10)],
        "bcub": [12 / 12, 16 / 21, 2 * (12 / 12) * (16 / 21) / (12 / 12 + 16 / 21)],
    },
    "TC-E-1": {
        "muc": [9 / 9, 9 / 10, 2 * (9 / 9) * (9 / 10) / (9 / 9 + 9 / 10)],
        "bcub": [1, 7 / 12, 2 * 1 * (7 / 12) / (1 + 7 / 12)],
    },
    "TC-F-1": {"muc": [2 / 3, 2 / 2, 2 * (2 / 3) * (2 / 2) / (2 / 3 + 2 / 2)]},
    "TC-K-1": {"muc": [3 / 6, 3 / 6, 3 / 6]},
    "TC-L-1": {"muc": [2 / 5, 2 / 4, 2 * (2 / 5) * (2 / 4) / (2 / 5 + 2 / 4)]},
    "TC-M-1": {"muc": [1, 1, 1], "bcub": [1, 1, 1], "ceafe": [1, 1, 1]},
    "TC-M-2": {"muc": [0, 0, 0]},
    "TC-M-5": {"muc": [0, 0, 0]},
    "TC-N-1": {"muc": [0, 0, 0]},
    "TC-N-2": {"muc": [0, 0, 0]},
    "TC-N-4": {"muc": [0, 0, 0]},
}


def clusters_of(name: str):
    """The clusters of the one document of a case file; the two-column files (document name
    and coreference) are padded to five columns first."""
    lines = (CASES / name).read_text().splitlines()
    padded, word = [], 0
    for line in lines:
        columns = line.split()
        if line.startswith("#") or not columns:
            padded.append(line)
            word = 0
        elif len(columns) == 2:
            padded.append(f"{columns[0]}\t0\t{word}\tw{word}\t{columns[1]}")
            word += 1
        else:
            padded.append(line)
    (document,) = read_documents(padded)
    return document.clusters


@pytest.mark.parametrize("case", sorted(SCORER_COUNTS))
def test_the_counts_are_the_reference_scorers(case):
    files = SCORER_COUNTS[case]
    ours = document_counts(clusters_of(files["key"]), clusters_of(files["response"]))
    for scorer_name, our_name in OUR_NAMES.items():
        assert ours[our_name] == pytest.approx(files[scorer_name], abs=1e-9), scorer_name


@pytest.mark.parametrize("case", sorted(AUTHORS_VALUES))
def test_recall_precision_and_f1_are_the_scorer_authors_values(case):
    metric = Conll2012CorefScores()
    files = SCORER_COUNTS[case]
    metric([clusters_of(files["response"])], [clusters_of(files["key"])])
    scores = metric.get_metric()
    for scorer_name, (recall, precision, f1) in AUTHORS_VALUES[case].items():
        name = OUR_NAMES[scorer_name]
        got = [scores[f"{name}_recall"], scores[f"{name}_precision"], scores[f"{name}_f1"]]
        assert got == pytest.approx([recall, precision, f1], abs=1e-5), scorer_name


def test_documents_add_up_counts_as_the_scorer_does_and_coref_f1_averages_the_f1s():
    metric = Conll2012CorefScores()
    cases = ["TC-A-4", "TC-D-1", "TC-L-1"]
    responses = [clusters_of(SCORER_COUNTS[c]["response"]) for c in cases]
    keys = [clusters_of(SCORER_COUNTS[c]["key"]) for c in cases]
    metric(responses[:2], keys[:2])
    metric(responses[2:], keys[2:])
    scores = metric.get_metric(reset=True)
    for scorer_name, name in OUR_NAMES.items():
        totals = [sum(SCORER_COUNTS[c][scorer_name][i] for c in cases) for i in range(4)]
        assert scores[f"{name}_recall"] == pytest.approx(totals[0] / totals[1])
        assert scores[f"{name}_precision"] == pytest.approx(totals[2] / totals[3])
    assert scores["coref_f1"] == pytest.approx(
        (scores["muc_f1"] + scores["b3_f1"] + scores["ceafe_f1"]) / 3
    )
    assert metric.get_metric()["coref_f1"] == 0.0  # reset


def _random_clustering(rng: random.Random, mentions: List, singletons: bool):
    chosen = rng.sample(mentions, rng.randint(0, len(mentions)))
    clusters: List[List] = []
    for mention in chosen:
        if clusters and rng.random() < 0.6:
            rng.choice(clusters).append(mention)
        else:
            clusters.append([mention])
    return [c for c in clusters if singletons or len(c) > 1]


def test_without_singletons_the_scores_are_allennlp_models_conll_coref_scores(allennlp_models):
    from allennlp_models.coref.metrics.conll_coref_scores import Scorer

    rng = random.Random(0)
    mentions = [(start, start + width) for start in range(30) for width in range(3)]
    ours = Conll2012CorefScores()
    theirs = [Scorer(m) for m in (Scorer.muc, Scorer.b_cubed, Scorer.ceafe)]
    for _ in range(200):
        key = _random_clustering(rng, mentions, singletons=False)
        response = _random_clustering(rng, mentions, singletons=False)
        ours([response], [key])
        key_tuples = [tuple(c) for c in key]
        response_tuples = [tuple(c) for c in response]
        to_key = {m: c for c in key_tuples for m in c}
        to_response = {m: c for c in response_tuples for m in c}
        for scorer in theirs:
            scorer.update(response_tuples, key_tuples, to_response, to_key)
    scores = ours.get_metric()
    for name, scorer in zip(("muc", "b3", "ceafe"), theirs):
        assert scores[f"{name}_precision"] == pytest.approx(scorer.get_precision())
        assert scores[f"{name}_recall"] == pytest.approx(scorer.get_recall())
        assert scores[f"{name}_f1"] == pytest.approx(scorer.get_f1())


def test_with_singletons_b3_and_ceafe_count_them_as_the_reference_scorer_does(allennlp_models):
    from allennlp_models.coref.metrics.conll_coref_scores import Scorer

    key = [[(0, 0), (2, 2)], [(4, 4)]]  # a singleton in the key ...
    response = [[(0, 0), (2, 2)]]  # ... that the response misses
    scores = Conll2012CorefScores()
    scores([response], [key])
    ours = scores.get_metric()
    assert ours["b3_recall"] == pytest.approx(2 / 3) and ours["ceafe_recall"] == pytest.approx(
        1 / 2
    )
    b_cubed = Scorer(Scorer.b_cubed)  # allennlp-models leaves the key's singleton out
    b_cubed.update(
        [tuple(c) for c in response],
        [tuple(c) for c in key],
        {m: tuple(c) for c in response for m in c},
        {m: tuple(c) for c in key for m in c},
    )
    assert b_cubed.get_recall() == 1.0


def test_mention_recall_counts_the_gold_mentions_among_the_kept_spans():
    recall = CorefMentionRecall()
    recall([[(0, 1), (3, 3), (7, 9)], [(1, 1)]], [[[(0, 1), (5, 5)], [(3, 3)]], [[(2, 2)]]])
    assert recall.get_metric(reset=True) == {"mention_recall": 2 / 4}
    assert recall.get_metric() == {"mention_recall": 0.0}


def test_mismatched_batches_are_errors():
    with pytest.raises(ValueError, match="1 documents and gold clusters of 2"):
        Conll2012CorefScores()([[]], [[], []])
    with pytest.raises(ValueError, match="1 documents and gold clusters of 0"):
        CorefMentionRecall()([[]], [])
