from typing import TYPE_CHECKING, List, Optional, cast

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import quoted
from elmo_plugin.allennlp.tasks.predictor_inputs import json_object_line
from elmo_plugin.allennlp.tasks.srl.tags import OUTSIDE_TAG

if TYPE_CHECKING:
    from spacy.language import Language


@Predictor.register("deep_srl")
class DeepSrlPredictor(Predictor):
    """
    Semantic role labels for given predicates with a "deep_srl" model.

    Input: `{"sentence": "..."}` (split into words by spaCy's rule-based English tokenizer)
    or `{"tokens": [...]}`, and the predicates, as `"predicate_indices": [0-based word
    indices]` or `"verbs": [words]` (every occurrence of each word). The predicates are
    required: the model labels arguments of given predicates and does not find predicates.

    Output: `{"words": [...], "verbs": [{"verb", "predicate_index", "tags", "description"}]}`,
    one entry per predicate, where "description" brackets the arguments, e.g.
    `[ARG0: President Bush] [V: nominated] [ARG1: two individuals]` (span tags) or
    `President [ARG0: Bush] [V: nominated] two [ARG1: individuals]` (head tags).

    Registered as a `Predictor` with name "deep_srl".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
        A reader with `text_to_instance(words, predicate_index)` ("universal_propbank_srl"
        or "conll_srl_columns").
    frozen : `bool`, optional (default = `True`)
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._spacy: Optional["Language"] = None

    @overrides
    def load_line(self, line: str) -> JsonDict:
        return json_object_line(line)

    @overrides
    def predict_json(self, inputs: JsonDict) -> JsonDict:
        words = self._words(inputs)
        predicate_indices = _predicate_indices(inputs, words)
        instances = [self._dataset_reader.text_to_instance(words, i) for i in predicate_indices]
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        outputs = self._model.forward_on_instances(instances) if instances else []
        verbs = [
            {
                "verb": words[i],
                "predicate_index": i,
                "tags": output["tags"],
                # Typed an array by `forward_on_instances`: the tag strings of
                # `make_output_human_readable`.
                "description": bracketed_description(words, cast(List[str], output["tags"])),
            }
            for i, output in zip(predicate_indices, outputs)
        ]
        return sanitize({"words": words, "verbs": verbs})

    @overrides
    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        return [self.predict_json(one) for one in inputs]

    @overrides
    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        raise NotImplementedError("a sentence gives one instance per predicate: use predict_json")

    def _words(self, inputs: JsonDict) -> List[str]:
        if "tokens" in inputs:
            tokens = inputs["tokens"]
            if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
                raise ConfigurationError(
                    f"'tokens' must be a list of strings, got {quoted(tokens)}"
                )
            return tokens
        if "sentence" in inputs:
            if not isinstance(inputs["sentence"], str):
                raise ConfigurationError(
                    f"'sentence' must be a string, got {quoted(inputs['sentence'])}"
                )
            return [token.text for token in self._tokenizer()(inputs["sentence"])]
        raise ConfigurationError(
            f"expected a 'sentence' or 'tokens' key in the input, found {sorted(inputs)}"
        )

    def _tokenizer(self) -> "Language":
        if self._spacy is None:
            import spacy  # only here: "tokens" inputs need no spaCy

            self._spacy = spacy.blank("en")  # rule-based: no model download
        return self._spacy


def _predicate_indices(inputs: JsonDict, words: List[str]) -> List[int]:
    if "predicate_indices" in inputs:
        indices = inputs["predicate_indices"]
        if not isinstance(indices, list) or not all(_is_int(i) for i in indices):
            raise ConfigurationError(
                "'predicate_indices' must be a list of 0-based word indices (integers), "
                f"got {quoted(indices)}"
            )
        for i in indices:
            if not 0 <= i < len(words):
                raise ConfigurationError(
                    f"predicate index {i} is outside the sentence of {len(words)} words "
                    f"{quoted(words)}"
                )
        return indices
    if "verbs" in inputs:
        verbs = inputs["verbs"]
        if not isinstance(verbs, list) or not all(isinstance(v, str) for v in verbs):
            raise ConfigurationError(f"'verbs' must be a list of words, got {quoted(verbs)}")
        wanted = set(verbs)
        return [i for i, word in enumerate(words) if word in wanted]
    raise ConfigurationError(
        "the input names no predicates: give 'predicate_indices' (0-based word indices) or "
        "'verbs' (words)"
    )


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def bracketed_description(words: List[str], tags: List[str]) -> str:
    """
    The words with each labelled span in brackets: BIO spans (`B-X I-X ...`) become
    `[X: w1 w2]`, any other non-`O` tag (head mode) labels its single word.
    """
    pieces: List[str] = []
    label: Optional[str] = None
    span: List[str] = []
    for word, tag in zip(words, tags):
        continues_span = tag.startswith("I-") and label == tag[2:]
        if span and not continues_span:
            pieces.append(f"[{label}: {' '.join(span)}]")
            span, label = [], None
        if continues_span:
            span.append(word)
        elif tag == OUTSIDE_TAG:
            pieces.append(word)
        else:
            label = tag[2:] if tag[:2] in ("B-", "I-") else tag
            span = [word]
    if span:
        pieces.append(f"[{label}: {' '.join(span)}]")
    return " ".join(pieces)
