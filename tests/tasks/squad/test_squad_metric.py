import pytest
from allennlp.common import Params
from allennlp.training.metrics import Metric

from elmo_plugin.allennlp.tasks.squad.metrics import SquadV1EmF1
from elmo_plugin.allennlp.tasks.squad.metrics.answer_scores import normalize_answer

# (prediction, references, exact match, F1), worked by hand with the official v1.1 rules.
HAND_WORKED = [
    # "the" is dropped: identical after normalisation.
    ("the Denver Broncos", ["Denver Broncos"], 1.0, 1.0),
    # vs "Denver Broncos": precision 1/1, recall 1/2 -> F1 2/3; vs "Broncos": no overlap.
    ("Denver", ["Denver Broncos", "Broncos"], 0.0, 2 / 3),
    # "carolina panthers" vs "panthers": precision 1/2, recall 1 -> 2/3.
    ("Carolina Panthers!", ["Panthers"], 0.0, 2 / 3),
    # Both normalise to "": equal strings, but no common token, so F1 is 0 in v1.1.
    ("a", ["the"], 1.0, 0.0),
    # Punctuation and whitespace removed.
    ("  Santa Clara,\tCalifornia ", ["Santa Clara California"], 1.0, 1.0),
    # Repeated tokens count once per match: "cat cat" vs "cat" -> precision 1/2, recall 1.
    ("the the cat cat", ["cat"], 0.0, 2 / 3),
]


def test_normalisation_follows_the_official_script():
    assert normalize_answer("The  Cat's (an) HAT.") == "cats hat"
    assert normalize_answer("theatre an anthem") == "theatre anthem"  # only whole words


@pytest.mark.parametrize("prediction, references, em, f1", HAND_WORKED)
def test_each_hand_worked_example(prediction, references, em, f1):
    metric = SquadV1EmF1()
    metric([prediction], [references])
    scores = metric.get_metric()
    assert scores["em"] == pytest.approx(em)
    assert scores["f1"] == pytest.approx(f1)


def test_averages_over_questions_and_resets():
    metric = Metric.from_params(Params({"type": "squad_v1_em_f1"}))
    assert isinstance(metric, SquadV1EmF1)
    predictions = [example[0] for example in HAND_WORKED]
    references = [example[1] for example in HAND_WORKED]
    metric(predictions[:2], references[:2])
    metric(predictions[2:], references[2:])
    scores = metric.get_metric(reset=True)
    assert scores["em"] == pytest.approx(3 / 6)
    assert scores["f1"] == pytest.approx((1 + 2 / 3 + 2 / 3 + 0 + 1 + 2 / 3) / 6)
    assert metric.get_metric() == {"em": 0.0, "f1": 0.0}


def test_agrees_with_the_squad_tools_of_allennlp_models_except_on_empty_answers(allennlp_models):
    # allennlp-models packages the SQuAD 2.0 script: same normalisation and scores, except
    # that two empty answers get F1 1 there and 0 in v1.1.
    import allennlp_models.rc.tools.squad as tools

    cases = [case for case in HAND_WORKED if normalize_answer(case[0])] + [
        ("1,230 km (760 mi)", ["1,230 km", "760 mi"], None, None),
        ("Beyoncé's father", ["her father Mathew Knowles", "Beyonce's father"], None, None),
    ]
    for prediction, references, _, _ in cases:
        metric = SquadV1EmF1()
        metric([prediction], [references])
        scores = metric.get_metric()
        assert scores["em"] == tools.metric_max_over_ground_truths(
            tools.compute_exact, prediction, references
        )
        assert scores["f1"] == pytest.approx(
            tools.metric_max_over_ground_truths(tools.compute_f1, prediction, references)
        )


def test_rejects_mismatched_or_empty_references():
    metric = SquadV1EmF1()
    with pytest.raises(ValueError, match="2 predictions for 1 reference lists"):
        metric(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="no reference answers"):
        metric(["a"], [[]])
