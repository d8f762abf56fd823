"""What `conll_ner` keeps over AllenNLP's `sentence_tagger`: it loads no spaCy model, and has
no `predictions_to_labeled_instances` that `bilstm_crf_tagger` cannot run."""

import pytest
import spacy
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.models import Model

from elmo_plugin.allennlp.tasks.ner.dataset_readers import Conll2003NerReader
from elmo_plugin.allennlp.tasks.ner.predictors import ConllNerPredictor
from tests import paths

FIXTURES = paths.FIXTURES / "ner"
SENTENCE = "Peter Blackburn lives in Brussels."


def tagger_predictor() -> ConllNerPredictor:
    reader = Conll2003NerReader()
    vocab = Vocabulary.from_instances(reader.read(FIXTURES / "train.txt"))
    embedder = {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 4}}}
    params = {
        "type": "bilstm_crf_tagger",
        "text_field_embedder": embedder,
        "encoder": {"type": "lstm", "hidden_size": 3, "bidirectional": True},
    }
    return ConllNerPredictor(Model.from_params(vocab=vocab, params=Params(params)), reader)


def test_tags_a_sentence_without_loading_a_spacy_model(monkeypatch):
    def no_model(*args, **kwargs):
        raise AssertionError("a spaCy model was loaded")

    monkeypatch.setattr(spacy, "load", no_model)
    output = tagger_predictor().predict(SENTENCE)
    assert output["tokens"] == ["Peter", "Blackburn", "lives", "in", "Brussels", "."]
    assert len(output["tags"]) == 6


def test_interpretation_is_not_offered():
    predictor = tagger_predictor()
    instance = predictor._json_to_instance({"sentence": SENTENCE})
    with pytest.raises(RuntimeError, match="implement this method"):
        predictor.predictions_to_labeled_instances(instance, predictor.predict(SENTENCE))
