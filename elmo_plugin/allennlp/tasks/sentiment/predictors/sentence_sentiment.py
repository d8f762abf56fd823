from typing import List

import numpy
from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.data.fields import LabelField
from allennlp.predictors import Predictor
from overrides import overrides

from elmo_plugin.allennlp.tasks.sentence_predictor import SentencePredictor


@Predictor.register("sentence_sentiment")
class SentenceSentimentPredictor(SentencePredictor):
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

    task = "classify"
    drop_blank_given_tokens = True

    @overrides
    def predictions_to_labeled_instances(
        self, instance: Instance, outputs: JsonDict
    ) -> List[Instance]:
        labeled = instance.duplicate()
        label = int(numpy.argmax(outputs["class_probabilities"]))
        labeled.add_field("label", LabelField(label, skip_indexing=True))
        return [labeled]
