"""
What the predictors of one sentence a JSON line share (`conll_ner`, `sentence_sentiment`): the
input `{"sentence": "..."}`, tokenized with spaCy's rule-based English tokenizer (no model
download), or `{"tokens": [...]}` for text tokenized already (`sentence_or_tokens`), one JSON
object a line (`json_object_line`).
"""

from typing import ClassVar

import spacy
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors import Predictor
from overrides import overrides

from elmo_plugin.allennlp.tasks.predictor_inputs import json_object_line, sentence_or_tokens


class SentencePredictor(Predictor):
    """
    A predictor of one sentence an input, read as above; a subclass, registered, names what it
    does with the tokens (`task`, for the error on an input without any) and whether blank
    tokens of a `"tokens"` list are dropped.

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
        A reader with `text_to_instance(tokens)`.
    """

    task: ClassVar[str]
    drop_blank_given_tokens: ClassVar[bool]

    def __init__(self, model: Model, dataset_reader: DatasetReader) -> None:
        super().__init__(model, dataset_reader)
        self._tokenizer = spacy.blank("en").tokenizer

    @overrides
    def load_line(self, line: str) -> JsonDict:
        return json_object_line(line)

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    @overrides
    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        tokens = sentence_or_tokens(
            json_dict, self._tokenizer, self.task, self.drop_blank_given_tokens
        )
        return self._dataset_reader.text_to_instance(tokens)
