from typing import List

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor
from overrides import overrides

from elmo_plugin.allennlp.tasks.sentence_predictor import SentencePredictor

_OUTPUT_KEYS = ("tokens", "tags", "spans")


@Predictor.register("conll_ner")
class ConllNerPredictor(SentencePredictor):
    """
    Named entities of a sentence, for `allennlp predict` on a `bilstm_crf_tagger` archive.

    Input JSON lines are `{"sentence": "Peter Blackburn lives in Brussels ."}`, tokenized with
    spaCy's rule-based English tokenizer (no model download), or `{"tokens": ["Peter", ...]}`
    for text tokenized already. Output: `{"tokens": [...], "tags": [...], "spans": [{"label":
    "PER", "start": 0, "end": 1, "text": "Peter Blackburn"}, ...]}`, with inclusive `end`.

    AllenNLP's core `sentence_tagger` predictor does the same for `{"sentence": ...}`; ours
    adds the `"tokens"` input, a `ConfigurationError` for an input with neither key or no
    tokens, and the output cut to tokens, tags and spans. It does not subclass it: its
    constructor loads spaCy's `en_core_web_sm` model (downloading it when absent; ours needs no
    model), and its `predictions_to_labeled_instances` (for `allennlp.interpret`) reads only
    BIOUL tags and adds an `ignore_loss_on_o_tags` field that `bilstm_crf_tagger.forward` does
    not take, so inheriting it would turn `Predictor`'s clear "not implemented" into a crash.

    Registered as a `Predictor` with name "conll_ner".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
        A reader with `text_to_instance(tokens)`, e.g. "conll2003_ner".
    """

    task = "tag"
    drop_blank_given_tokens = False

    @overrides
    def predict_instance(self, instance: Instance) -> JsonDict:
        return self._select(super().predict_instance(instance))

    @overrides
    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        return [self._select(output) for output in super().predict_batch_instance(instances)]

    @staticmethod
    def _select(output: JsonDict) -> JsonDict:
        output["tokens"] = output.pop("words")
        return {key: output[key] for key in _OUTPUT_KEYS}
