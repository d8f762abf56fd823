"""What `allennlp predict` feeds our predictors, line by line: anything but a JSON object, or
text that is not valid Unicode, is a clear error quoting (a bounded part of) the line."""

import re

import pytest
from allennlp.predictors import Predictor

import elmo_plugin.allennlp.tasks  # noqa: F401
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.srl.predictors.deep_srl import _predicate_indices

PREDICTORS = [
    "conll_ner",
    "nli_pair",
    "squad_answer",
    "deep_srl",
    "sentence_sentiment",
    "coref_clusters",
]


def _load_line(name, line):
    predictor = Predictor.by_name(name)
    assert isinstance(predictor, type) and issubclass(predictor, Predictor)
    return predictor.load_line(object.__new__(predictor), line)  # reads no state


@pytest.mark.parametrize("name", PREDICTORS)
@pytest.mark.parametrize(
    "line,got",
    [
        ("null", "null"),
        ("3.5", "a number"),
        ('["a", "b"]', "an array"),
        ('"text"', "a string"),
        ("true", "true or false"),
    ],
)
def test_a_line_that_is_not_a_json_object_is_named(name, line, got):
    with pytest.raises(
        ConfigurationError,
        match=re.escape(f"input line {line!r}: expected a JSON object") + f".*got {got}",
    ):
        _load_line(name, line + "\n")


@pytest.mark.parametrize("name", PREDICTORS)
def test_a_lone_surrogate_is_named_with_its_key(name):
    with pytest.raises(ConfigurationError, match=r"'sentence' holds a lone surrogate \\ud800"):
        _load_line(name, '{"sentence": "a \\ud800 b"}')
    with pytest.raises(ConfigurationError, match=r"'tokens'\[1\] holds a lone surrogate"):
        _load_line(name, '{"tokens": ["a", "\\udfff"]}')


def test_not_json_and_long_lines_are_quoted_bounded():
    with pytest.raises(ConfigurationError, match="not JSON") as caught:
        _load_line("conll_ner", "{" + "x" * 100_000)
    assert len(str(caught.value)) < 500
    assert _load_line("conll_ner", '{"sentence": "fine"}') == {"sentence": "fine"}


@pytest.mark.parametrize(
    "inputs,expected",
    [
        ({"predicate_indices": [1.7]}, "predicate_indices.*integers.*1.7"),
        ({"predicate_indices": [True]}, "predicate_indices.*integers.*True"),
        ({"predicate_indices": "1"}, "predicate_indices.*a list"),
        ({"verbs": "said"}, "'verbs' must be a list of words, got 'said'"),
        ({"verbs": [1]}, "'verbs' must be a list of words"),
    ],
)
def test_srl_predicates_must_be_integers_or_words(inputs, expected):
    with pytest.raises(ConfigurationError, match=expected):
        _predicate_indices(inputs, ["He", "said", "so"])
    assert _predicate_indices({"predicate_indices": [1]}, ["He", "said", "so"]) == [1]
    assert _predicate_indices({"verbs": ["said"]}, ["He", "said", "so"]) == [1]


def test_srl_and_ner_sentences_and_tokens_must_be_text():
    from elmo_plugin.allennlp.tasks.ner.predictors.conll_ner import ConllNerPredictor
    from elmo_plugin.allennlp.tasks.srl.predictors.deep_srl import DeepSrlPredictor

    srl, ner = object.__new__(DeepSrlPredictor), object.__new__(ConllNerPredictor)
    ner._tokenizer = None  # the inputs are refused before any tokenizing
    for inputs in ({"sentence": 3}, {"tokens": "a b"}, {"tokens": [1, 2]}):
        with pytest.raises(ConfigurationError, match="must be a"):
            srl._words(inputs)
        with pytest.raises(ConfigurationError, match="must be a"):
            ner._json_to_instance(inputs)
