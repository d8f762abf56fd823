import logging
from typing import Dict, Iterable, List, Optional

from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import text_lines
from elmo_plugin.allennlp.tasks.reading import (
    DEFAULT_MAX_SENTENCE_LENGTH,
    LongSkipper,
    check_data_file,
    require_any,
)
from elmo_plugin.allennlp.tasks.srl.dataset_readers.propbank_conllu import (
    PropbankSentence,
    read_propbank_conllu,
)
from elmo_plugin.allennlp.tasks.srl.dataset_readers.srl_instance import (
    attach_token_indexers,
    srl_instance,
)
from elmo_plugin.allennlp.tasks.srl.dependency_spans import dependency_subtrees
from elmo_plugin.allennlp.tasks.srl.label_modes import label_mode as label_mode_named

logger = logging.getLogger(__name__)


@DatasetReader.register("universal_propbank_srl")
class UniversalPropbankSrlReader(DatasetReader):
    """
    Reads Universal PropBank files (e.g. UP 1.0 English-EWT): CoNLL-U plus a predicate
    column (11, a PropBank roleset on each predicate) and one argument column per predicate
    (12 ...), with each argument's role on its syntactic head word.

    Each predicate of a sentence becomes one `Instance` (see `srl_instance`): "tokens",
    "predicate_indicator" (0/1), "tags" and "metadata" ("words", "predicate_index",
    "gold_tags", "label_mode"). Sentences without predicates give no instance. Enhanced-UD
    empty nodes (IDs like `8.1`) and multiword-token lines are skipped. Sentences whose column
    11 is empty (UP's unannotated sentences, with `_=` in column 10) count as predicate-less.

    The tags depend on `label_mode`:

    * `"head"`: the role on each argument head word, `V` on the predicate (the token with
      the roleset), `C-V` on the other parts of a multiword predicate (the particle of
      `blow_up.06`, which the file marks `V` or `C-V`), `O` elsewhere (CoNLL-2009-style
      dependency SRL).
    * `"span"`: BIO tags over each argument head's dependency subtree (column 7), `B-V` on
      the predicate, `B-C-V` on other predicate parts. A subtree that holds the predicate
      or another argument of the same predicate is cut so that no span overlaps: the
      predicate's tokens and the nested argument's subtree are removed, and the span is the
      run of consecutive remaining tokens around the head (see
      `elmo_plugin.allennlp.tasks.srl.dependency_spans.argument_spans`).

    Registered as a `DatasetReader` with name "universal_propbank_srl".

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional
        (default = `{"tokens": SingleIdTokenIndexer()}`)
        E.g. words, characters, and `elmo_characters` for ELMo.
    label_mode : `str`, optional (default = `"span"`)
        `"span"` or `"head"` (see `elmo_plugin.allennlp.tasks.srl.label_modes`).
    label_namespace : `str`, optional (default = `"span_labels"` or `"head_labels"`)
        One namespace per label mode, so a config can reserve the tags of both and switch
        modes with `label_mode` alone.
    max_sentence_length : `int`, optional (default = `512`)
        A sentence of more tokens is skipped, with a warning naming the file and line, and
        counted in `long_sentences.count` (UP English-EWT's longest is 81 tokens, so the
        default skips none of it). Not split, as the NER reader does: a piece would lose the
        arguments (or the predicate) in the other pieces and the dependency subtrees that give
        the spans. Not cut either: the predicates kept would be taught that their arguments
        past the cut do not exist. `None` keeps every sentence.
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        label_mode: str = "span",
        label_namespace: Optional[str] = None,
        max_sentence_length: Optional[int] = DEFAULT_MAX_SENTENCE_LENGTH,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        self._label_mode = label_mode_named(label_mode)
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._label_namespace = self._label_mode.namespace(label_namespace)
        self.long_sentences = LongSkipper(max_sentence_length)

    @overrides
    def _read(self, file_path: str) -> Iterable[Instance]:
        check_data_file(file_path)
        logger.info("Reading Universal PropBank SRL instances from %s", file_path)
        sentences = self.long_sentences.some_kept_sentences(
            read_propbank_conllu(text_lines(file_path), file_path),
            lambda sentence: sentence.words,
            lambda sentence: sentence.first_line,
            file_path,
        )
        kept = require_any(sentences, _gives_instances, file_path, "annotated predicates")
        for sentence in self.shard_iterable(kept):
            yield from self._sentence_instances(sentence, file_path)
        if self.long_sentences.count:
            logger.warning("%s: %s", file_path, self.long_sentences.summary())

    def _sentence_instances(self, sentence: PropbankSentence, file_path: str) -> Iterable[Instance]:
        try:
            dependency_subtrees(sentence.heads)  # a HEAD cycle is an error in either mode
            all_tags = [
                self._label_mode.tags(sentence.heads, predicate_index, labels)
                for predicate_index, labels in zip(
                    sentence.predicate_indices, sentence.argument_labels
                )
            ]
        except ValueError as error:
            raise ConfigurationError(
                f"{file_path}, sentence starting at line {sentence.first_line}: {error}"
            ) from error
        for predicate_index, tags in zip(sentence.predicate_indices, all_tags):
            yield self.text_to_instance(sentence.words, predicate_index, tags)

    @overrides(check_signature=False)
    def text_to_instance(
        self, words: List[str], predicate_index: int, tags: Optional[List[str]] = None
    ) -> Instance:
        return srl_instance(words, predicate_index, self._label_mode, self._label_namespace, tags)

    @overrides
    def apply_token_indexers(self, instance: Instance) -> None:
        attach_token_indexers(instance, self._token_indexers)


def _gives_instances(sentence: PropbankSentence) -> bool:
    return bool(sentence.predicate_indices) and bool(sentence.argument_labels)
