from typing import List, cast

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.predictor_inputs import json_object_line
from elmo_plugin.allennlp.tasks.squad.dataset_readers.squad_v1 import SquadV1Reader

_OUTPUT_KEYS = ("best_span_str", "best_span", "best_span_chars", "question_id")


@Predictor.register("squad_answer")
class SquadAnswerPredictor(Predictor):
    """
    Answers a question about a passage with a span-extraction model such as `bidaf_rc`.
    Input: `{"passage": ..., "question": ...}` (an optional `"id"` is passed through). Output:
    `{"best_span_str": answer text, "best_span": [first, last] passage token indices,
    "best_span_chars": [start, end) character offsets into the passage, "question_id"}`.

    Registered as a `Predictor` with name "squad_answer".
    """

    @overrides
    def load_line(self, line: str) -> JsonDict:
        return json_object_line(line)

    def predict(self, question: str, passage: str) -> JsonDict:
        return self.predict_json({"question": question, "passage": passage})

    @overrides
    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        for key in ("question", "passage"):
            if not isinstance(json_dict.get(key), str):
                raise ConfigurationError(
                    f'expected a "{key}" string in the input, got keys {sorted(json_dict)}'
                )
        reader = cast(SquadV1Reader, self._dataset_reader)
        return reader.text_to_instance(
            json_dict["question"], json_dict["passage"], question_id=json_dict.get("id")
        )

    @overrides
    def predict_instance(self, instance: Instance) -> JsonDict:
        self._dataset_reader.apply_token_indexers(instance)
        return _answer_only(self._model.forward_on_instance(instance))

    @overrides
    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        return [_answer_only(output) for output in self._model.forward_on_instances(instances)]


def _answer_only(output: JsonDict) -> JsonDict:
    return sanitize({key: output[key] for key in _OUTPUT_KEYS if key in output})
