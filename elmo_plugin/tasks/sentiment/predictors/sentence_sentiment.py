from typing import List

import numpy
import spacy
from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import LabelField
from allennlp.models import Model
from allennlp.predictors import Predictor
from overrides import overrides

from elmo_plugin.tasks.predictor_inputs import json_object_line
from elmo_plugin.text_files import quoted


@Predictor.register("sentence_sentiment")
class SentenceSentimentPredictor(Predictor):
    """
    The sentiment of a sentence, for `allennlp predict` on a `bcn_classifier` archive.

    Input JSON lines are `{"sentence": "A lovely film ."}`, tokenized with spaCy's rule-based
    English tokenizer (no model download), or `{"tokens": ["A", "lovely", "film", "."]}` for
    text tokenized already (the SST trees are PTB-tokenized: `do n't`, `'s`). Output:
    `label` (the predicted label, "0" very negative to "4" very positive for SST-5),
    `probabilities` (label to probability), `class_probabilities` and `logits` (in vocabulary
    order) and the `tokens`.

    AllenNLP's core `text_classifier` predictor does the same for `{"sentence": ...}`; ours
    adds the `"tokens"` input, the label names with their probabilities, and a
    `ConfigurationError` for an input with neither key or no tokens. It does not subclass it:
    for a reader without a tokenizer (ours takes the trees' words) it tokenizes with
    `SpacyTokenizer()`, which loads spaCy's `en_core_web_sm` model (downloading it when
    absent; ours needs no model), and its `predictions_to_labeled_instances` reads a `probs`
    output that a BCN does not give (ours reads `class_probabilities`).

    Registered as a `Predictor` with name "sentence_sentiment".

    # Parameters

    model : `Model`
        A classifier whose outputs include `class_probabilities` (e.g. `bcn_classifier`).
    dataset_reader : `DatasetReader`
        A reader with `text_to_instance(tokens)` (e.g. `sst_trees`).
    """

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
        return self._dataset_reader.text_to_instance(self._tokens(json_dict))

    def _tokens(self, json_dict: JsonDict) -> List[str]:
        if "tokens" in json_dict:
            tokens = json_dict["tokens"]
            if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
                raise ConfigurationError(
                    f"'tokens' must be a list of strings, got {quoted(tokens)}"
                )
            tokens = [token for token in tokens if token.strip()]
        elif "sentence" in json_dict:
            if not isinstance(json_dict["sentence"], str):
                raise ConfigurationError(
                    f"'sentence' must be a string, got {quoted(json_dict['sentence'])}"
                )
            tokens = [token.text for token in self._tokenizer(json_dict["sentence"])]
            tokens = [token for token in tokens if token.strip()]
        else:
            raise ConfigurationError(
                f"expected a 'sentence' string or a 'tokens' list, got keys {sorted(json_dict)}"
            )
        if not tokens:
            raise ConfigurationError(f"no tokens to classify in {quoted(json_dict)}")
        return tokens

    @overrides
    def predictions_to_labeled_instances(
        self, instance: Instance, outputs: JsonDict
    ) -> List[Instance]:
        labeled = instance.duplicate()
        label = int(numpy.argmax(outputs["class_probabilities"]))
        labeled.add_field("label", LabelField(label, skip_indexing=True))
        return [labeled]
