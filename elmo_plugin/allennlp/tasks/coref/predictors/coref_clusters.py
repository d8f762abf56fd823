from typing import Any, Dict, List, Optional, Tuple, cast

import spacy
import torch
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import MetadataField, TensorField
from allennlp.models import Model
from allennlp.predictors import Predictor
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import quoted
from elmo_plugin.allennlp.tasks.predictor_inputs import json_object_line


@Predictor.register("coref_clusters")
class CorefClustersPredictor(Predictor):
    """
    The coreference clusters of a document, for `allennlp predict` on a `span_ranking_coref`
    archive.

    Input JSON lines are `{"document": "Mr. Jones came. He sat down."}`, split into sentences
    and words by spaCy's rule-based English tokenizer and `sentencizer` (no model download), or
    `{"sentences": [["Mr.", "Jones", "came", "."], ["He", "sat", "down", "."]]}`, tokenized
    already. Output: `words` (the document's words), `sentences` (their words),
    `clusters` (each cluster a list of inclusive `[start, end]` word positions, counted over
    the whole document, in document order) and `cluster_texts` (each mention's text: the
    document's own characters for a `"document"`, the words joined by spaces for
    `"sentences"`).

    allennlp-models' `coreference_resolution` predictor does the same for `{"document": ...}`
    with spaCy's `en_core_web_sm` model (a download, and its parser, for the sentences); ours
    needs no model, takes pre-split sentences, gives each mention's text, and a bad input
    (neither key, a wrong type, no words) is a `ConfigurationError`.

    Registered as a `Predictor` with name "coref_clusters".

    # Parameters

    model : `Model`
        A `span_ranking_coref` model (its outputs `top_spans`, `antecedent_indices` and
        `predicted_antecedents`, and `clusters` from `make_output_human_readable`).
    dataset_reader : `DatasetReader`
        A reader with `text_to_instance(sentences)` (e.g. `litbank_coref`).
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader) -> None:
        super().__init__(model, dataset_reader)
        self._nlp = spacy.blank("en")
        self._nlp.add_pipe("sentencizer")

    @overrides
    def load_line(self, line: str) -> JsonDict:
        return json_object_line(line)

    def predict(self, document: str) -> JsonDict:
        return self.predict_json({"document": document})

    @overrides
    def predict_instance(self, instance: Instance) -> JsonDict:
        return self._with_texts(super().predict_instance(instance), instance)

    @overrides
    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        outputs = super().predict_batch_instance(instances)
        return [self._with_texts(output, instance) for output, instance in zip(outputs, instances)]

    @overrides
    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        sentences, characters = self._sentences(json_dict)
        instance = self._dataset_reader.text_to_instance(sentences)
        # Kept for the mentions' texts; the model does not read it.
        cast(MetadataField, instance["metadata"]).metadata["characters"] = characters
        return instance

    def _sentences(
        self, json_dict: JsonDict
    ) -> Tuple[List[List[str]], Optional[Tuple[str, List[Tuple[int, int]]]]]:
        """The sentences' words and, for a `"document"`, its text and each word's characters."""
        if "sentences" in json_dict:
            sentences = json_dict["sentences"]
            if not isinstance(sentences, list) or not all(
                isinstance(sentence, list) and all(isinstance(word, str) for word in sentence)
                for sentence in sentences
            ):
                raise ConfigurationError(
                    f"'sentences' must be a list of lists of words, got {quoted(sentences)}"
                )
            kept = [[word for word in sentence if word.strip()] for sentence in sentences]
            result, characters = [sentence for sentence in kept if sentence], None
        elif "document" in json_dict:
            document = json_dict["document"]
            if not isinstance(document, str):
                raise ConfigurationError(f"'document' must be a string, got {quoted(document)}")
            result = []
            offsets: List[Tuple[int, int]] = []
            for sentence in self._nlp(document).sents:
                words = [token for token in sentence if token.text.strip()]
                if words:
                    result.append([token.text for token in words])
                    offsets.extend((token.idx, token.idx + len(token.text)) for token in words)
            characters = (document, offsets)
        else:
            raise ConfigurationError(
                "expected a 'document' string or a 'sentences' list of lists of words, got keys "
                f"{sorted(json_dict)}"
            )
        if not result:
            raise ConfigurationError(f"no words to resolve in {quoted(json_dict)}")
        return result, characters

    def _with_texts(self, output: JsonDict, instance: Instance) -> JsonDict:
        metadata: Dict[str, Any] = cast(MetadataField, instance["metadata"]).metadata
        words = metadata["words"]
        characters = metadata.get("characters")

        def text(start: int, end: int) -> str:
            if characters is None:
                return " ".join(words[start : end + 1])
            document, offsets = characters
            return document[offsets[start][0] : offsets[end][1]]

        output["sentences"] = metadata["sentences"]
        output["cluster_texts"] = [
            [text(start, end) for start, end in cluster] for cluster in output["clusters"]
        ]
        return output

    @overrides
    def predictions_to_labeled_instances(
        self, instance: Instance, outputs: JsonDict
    ) -> List[Instance]:
        """One instance per predicted cluster (or one without any), labelled with that cluster
        alone: its mentions in cluster 0, every other span in none (-1), for
        `allennlp.interpret`."""
        spans = cast(TensorField, instance["spans"]).tensor.tolist()
        clusters = outputs["clusters"] or [[]]
        labeled = []
        for cluster in clusters:
            mentions = {tuple(mention) for mention in cluster}
            new = instance.duplicate()
            labels = [0 if tuple(span) in mentions else -1 for span in spans]
            new.add_field("span_labels", TensorField(torch.tensor(labels), padding_value=-1))
            metadata = cast(MetadataField, new["metadata"]).metadata
            metadata["clusters"] = [[tuple(mention) for mention in cluster]] if cluster else []
            labeled.append(new)
        return labeled
