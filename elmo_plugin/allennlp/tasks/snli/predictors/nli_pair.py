from typing import List

import numpy
from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.data.fields import LabelField
from allennlp.predictors import Predictor
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.predictor_inputs import json_object_line

# Accepted input keys for each sentence, first match wins.
PREMISE_KEYS = ("premise", "sentence1")
HYPOTHESIS_KEYS = ("hypothesis", "sentence2")


@Predictor.register("nli_pair")
class NliPairPredictor(Predictor):
    """
    Predicts whether a premise entails, contradicts or is neutral to a hypothesis, for
    `allennlp predict` and demos. Input lines are `{"premise": ..., "hypothesis": ...}`;
    the SNLI names `sentence1`/`sentence2` work too, so SNLI jsonl can be fed directly.
    Sentences are tokenised by the model's dataset reader (whitespace by default).

    The output holds `label` (the predicted label), `probabilities` (label to probability),
    `label_probs` and `label_logits` (in vocabulary order) and the tokens of both sentences.

    Registered as a `Predictor` with name "nli_pair".

    # Parameters

    model : `Model`
        A trained NLI model whose outputs include `label_probs` (e.g. `esim_nli`).
    dataset_reader : `DatasetReader`
        A reader with `text_to_instance(premise, hypothesis)` (e.g. `snli_jsonl`).
    """

    @overrides
    def load_line(self, line: str) -> JsonDict:
        return json_object_line(line)

    def predict(self, premise: str, hypothesis: str) -> JsonDict:
        return self.predict_json({"premise": premise, "hypothesis": hypothesis})

    @overrides
    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        premise = _first_present(json_dict, PREMISE_KEYS)
        hypothesis = _first_present(json_dict, HYPOTHESIS_KEYS)
        return self._dataset_reader.text_to_instance(premise, hypothesis)

    @overrides
    def predictions_to_labeled_instances(
        self, instance: Instance, outputs: JsonDict
    ) -> List[Instance]:
        labeled = instance.duplicate()
        labeled.add_field(
            "label", LabelField(int(numpy.argmax(outputs["label_probs"])), skip_indexing=True)
        )
        return [labeled]


def _first_present(json_dict: JsonDict, keys) -> str:
    for key in keys:
        if key in json_dict:
            value = json_dict[key]
            if not isinstance(value, str):
                raise ConfigurationError(f'"{key}" should be a string, got {type(value).__name__}')
            return value
    raise ConfigurationError(f"expected one of the keys {list(keys)} in {json_dict}")
