import logging
import re
from typing import (
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
    cast,
)

from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, LabelField, MetadataField, SpanField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Token
from overrides import overrides

from elmo_plugin.elmo import ELMO_INDEXER_KEY
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import quoted, text_lines
from elmo_plugin.allennlp.tasks.reading import (
    DEFAULT_MAX_SENTENCE_LENGTH,
    check_data_file,
    check_max_length,
    require_some,
    truncate_long,
)

logger = logging.getLogger(__name__)

SST_LABELS = ("0", "1", "2", "3", "4")
# What each granularity makes of the five labels; None drops the phrase (neutral in 2-class).
GRANULARITIES: Dict[str, Dict[str, Optional[str]]] = {
    "5-class": {label: label for label in SST_LABELS},
    "3-class": {"0": "0", "1": "0", "2": "1", "3": "2", "4": "2"},
    "2-class": {"0": "0", "1": "0", "2": None, "3": "1", "4": "1"},
}
# The PTB escapes of the SST trees, back to the text a user types (and the biLM read).
PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
# A leaf is separated by ASCII spaces or tabs only: "2\xa01\/2" (a no-break space) is one word.
_PIECES = re.compile(r"[()]|[^() \t\r\n]+")


class Phrase(NamedTuple):
    """A labelled node of a tree: its label and its words `words[start:end]`."""

    label: str
    start: int
    end: int


def parse_tree(line: str) -> Tuple[List[str], List[Phrase]]:
    """The words of the PTB-style tree on `line` and its labelled nodes, the root first (then
    in pre-order, as nltk's `Tree.subtrees`). Iterative, so a deep tree cannot overflow the
    stack. A malformed tree is a `ValueError` saying what is wrong; the reader names the
    file and line."""
    words: List[str] = []
    phrases: List[Optional[Phrase]] = []
    open_nodes: List[int] = []  # indices into `phrases`, with the node's label set
    expect_label = False
    closed_root = False
    for match in _PIECES.finditer(line):
        piece = match.group()
        if closed_root:
            raise ValueError(f"text after the tree's end at column {match.start() + 1}")
        if expect_label:
            if piece not in SST_LABELS:
                raise ValueError(
                    f"node label {quoted(piece)} at column {match.start() + 1} is not a "
                    f"sentiment label (expected one of {', '.join(SST_LABELS)})"
                )
            phrases.append(Phrase(piece, len(words), -1))
            open_nodes.append(len(phrases) - 1)
            expect_label = False
        elif piece == "(":
            expect_label = True
        elif piece == ")":
            if not open_nodes:
                raise ValueError(f"unbalanced ')' at column {match.start() + 1}")
            index = open_nodes.pop()
            phrase = cast(Phrase, phrases[index])
            if phrase.start == len(words):
                raise ValueError(f"node ending at column {match.start() + 1} has no words")
            phrases[index] = phrase._replace(end=len(words))
            closed_root = not open_nodes
        elif not open_nodes:
            raise ValueError(f"word {quoted(piece)} outside the tree (expected '(label ...)')")
        else:
            words.append(piece)
    if expect_label:
        raise ValueError("the line ends after '(' (expected a label)")
    if open_nodes:
        raise ValueError(f"{len(open_nodes)} unclosed '(' at the line's end")
    if not phrases:
        raise ValueError("no tree (expected '(label ...)')")
    return words, cast(List[Phrase], phrases)


def unescape_ptb(word: str) -> str:
    """`word` with the PTB escapes of the SST trees undone: `-LRB-` -> `(`, `\\/` -> `/`."""
    word = PTB_ESCAPES.get(word, word)
    return word.replace("\\/", "/").replace("\\*", "*") if "\\" in word else word


@DatasetReader.register("sst_trees")
class SstTreesReader(DatasetReader):
    """
    Reads the Stanford Sentiment Treebank's PTB-style trees (`trainDevTestTrees_PTB`: one
    sentence a line, a sentiment label 0-4 at every node, e.g. `(3 (2 The) (4 (3 Rock) ...))`).

    Each sentence (its root label), or with `use_subtrees` each labelled node, becomes an
    `Instance` with a `TextField` "tokens", a `LabelField` "label" (when there is a label) and
    a `MetadataField` "metadata" holding the "words".

    The instances are those of allennlp-models' `sst_tokens` reader, whose design this follows
    (it is not a dependency here): with `unescape_ptb=False`, every instance of SST's train
    and dev files, roots and phrases, 5- and 2-class, has the words and label of `sst_tokens`'
    in the same order, but the three train sentences with a no-break space (below).

    What ours adds: a malformed tree (unbalanced brackets, a label outside 0-4, a node without
    words, text after the tree) is a `ConfigurationError` naming the file and line, where
    `sst_tokens` raises nltk's `ValueError` naming neither; bytes that are not UTF-8, a line
    over `MAX_LINE_BYTES` and a file with no tree are errors too; the PTB escapes (`-LRB-`,
    `-RRB-`, `\\/`, `\\*`) are undone (`unescape_ptb`), so the words are what a user types to
    the predictor (the shipped biLM's vocabulary has `(`, not `-LRB-`); a leaf is one word even
    with a no-break space in it (`2\\xa01\\/2`, which nltk splits in two); an over-long
    sentence is cut with a warning; the tree is parsed without recursion (no nltk);
    `text_to_instance` takes strings or `Token`s with an optional label, as the predictor
    needs; and `phrases_in_context` gives ELMo each phrase inside its sentence.

    Registered as a `DatasetReader` with name "sst_trees".

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional
        (default = `{"tokens": SingleIdTokenIndexer()}`)
    use_subtrees : `bool`, optional (default = `False`)
        Every labelled node (phrase) an instance, the root first, as `sst_tokens` does: for
        phrase-level training. Dev and test read with the default, the root labels.
    granularity : `str`, optional (default = `"5-class"`)
        `"5-class"` keeps the labels 0-4 (SST-5, the paper's task); `"3-class"` maps 0-1, 2,
        3-4 to 0, 1, 2; `"2-class"` maps 0-1 to 0 and 3-4 to 1 and drops the neutral 2.
    unescape_ptb : `bool`, optional (default = `True`)
        Undo the PTB escapes of the words.
    label_namespace : `str`, optional (default = `"labels"`)
    max_sentence_length : `int`, optional (default = `512`)
        A longer sentence (or phrase) is cut to its first this many words, with a warning
        naming the file and line. `None` keeps every sentence whole.
    phrases_in_context : `bool`, optional (default = `False`)
        With `use_subtrees`, the ELMo ids of each phrase are those of its whole sentence: the
        token indexer under the key `"elmo"` indexes a `TextField` "elmo_context" (the
        sentence) instead of "tokens", and a `SpanField` "phrase_span" says where the phrase
        is in it (`bcn_classifier` takes the phrase's rows of ELMo's output there). Why: a
        model trained on phrases is tested on sentences, and a biLM gives a word in a
        three-word phrase another representation than in its sentence; in context, training
        sees the representations testing does. The biLM also runs once a sentence, not once a
        phrase, so the activation cache holds 8,544 sentences instead of 318,582 phrases.
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        use_subtrees: bool = False,
        granularity: str = "5-class",
        unescape_ptb: bool = True,
        label_namespace: str = "labels",
        max_sentence_length: Optional[int] = DEFAULT_MAX_SENTENCE_LENGTH,
        phrases_in_context: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        if granularity not in GRANULARITIES:
            raise ConfigurationError(
                f"granularity must be one of {sorted(GRANULARITIES)}, got {granularity!r}"
            )
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.use_subtrees = use_subtrees
        self.granularity = granularity
        self._labels = GRANULARITIES[granularity]
        self.unescape_ptb = unescape_ptb
        self._label_namespace = label_namespace
        self.max_sentence_length = check_max_length(max_sentence_length, "max_sentence_length")
        if phrases_in_context and ELMO_INDEXER_KEY not in self._token_indexers:
            raise ConfigurationError(
                f"sst_trees: phrases_in_context needs an ELMo token indexer under the key "
                f"{ELMO_INDEXER_KEY!r}; the token_indexers are {sorted(self._token_indexers)}"
            )
        self.phrases_in_context = phrases_in_context and use_subtrees

    @overrides
    def _read(self, file_path: str) -> Iterator[Instance]:
        check_data_file(file_path)
        logger.info("Reading SST trees from %s", file_path)
        read = [0]
        trees = require_some(
            self._trees_with_labels(require_some(self._trees(file_path), file_path, "trees"), read),
            file_path,
            f"trees with a {'phrase' if self.use_subtrees else 'root'} label in the granularity "
            f"{self.granularity!r}",
            lambda: f"{read[0]} trees read, every such label neutral (2), which it drops",
        )
        for line_number, words, phrases in self.shard_iterable(trees):
            contexts: Dict[int, TextField] = {}  # the sentence's windows, by first word
            for phrase in self._labelled(phrases):
                label = self._labels[phrase.label]
                where = f"{file_path}, line {line_number}"
                kept = truncate_long(
                    words[phrase.start : phrase.end], self.max_sentence_length, where
                )
                instance = self._instance(kept, label)
                if self.phrases_in_context:
                    self._add_context(instance, words, phrase.start, len(kept), contexts)
                yield instance

    def _labelled(self, phrases: List[Phrase]) -> List[Phrase]:
        """The phrases of a tree that become instances: the root (or with `use_subtrees` every
        node) unless the granularity drops its label."""
        wanted = phrases if self.use_subtrees else phrases[:1]
        return [phrase for phrase in wanted if self._labels[phrase.label] is not None]

    def _trees_with_labels(
        self, trees: Iterable[Tuple[int, List[str], List[Phrase]]], read: List[int]
    ) -> Iterator[Tuple[int, List[str], List[Phrase]]]:
        """The trees that give an instance; `read[0]` counts all."""
        for tree in trees:
            read[0] += 1
            if self._labelled(tree[2]):
                yield tree

    def _add_context(
        self,
        instance: Instance,
        words: List[str],
        start: int,
        length: int,
        contexts: Dict[int, TextField],
    ) -> None:
        """Adds the sentence `words` around the phrase `words[start:start + length]`: a window
        of at most `max_sentence_length` words that holds the phrase. The phrases of a window
        share its field, `contexts[first word]`: one copy of its ELMo ids, not one a phrase
        (a copy a phrase took many times the memory for SST's training phrases;
        docs/sentiment.md has the figure)."""
        limit = self.max_sentence_length or len(words)
        begin = max(0, min(start, len(words) - limit))
        if begin not in contexts:
            contexts[begin] = TextField([Token(word) for word in words[begin : begin + limit]])
        instance.add_field("elmo_context", contexts[begin])
        instance.add_field(
            "phrase_span", SpanField(start - begin, start - begin + length - 1, contexts[begin])
        )

    def _trees(self, file_path: str) -> Iterable[Tuple[int, List[str], List[Phrase]]]:
        for line_number, line in enumerate(text_lines(file_path), start=1):
            if not line.strip():
                continue
            try:
                words, phrases = parse_tree(line)
            except ValueError as error:
                raise ConfigurationError(
                    f"{file_path}, line {line_number}: {error}; expected one PTB-style tree "
                    "a line with a label 0-4 at every node, e.g. '(3 (2 A) (3 (3 good) (2 film)))'"
                ) from error
            if self.unescape_ptb:
                words = [unescape_ptb(word) for word in words]
            yield line_number, words, phrases

    @overrides(check_signature=False)
    def text_to_instance(
        self, tokens: Sequence[Union[Token, str]], sentiment: Optional[str] = None
    ) -> Optional[Instance]:
        """
        # Parameters

        tokens : `Sequence[Union[Token, str]]`
            The words of a sentence or phrase, tokenized already.
        sentiment : `str`, optional
            Its SST label "0" to "4", mapped by `granularity`.

        # Returns

        The `Instance`, or None for a phrase `granularity` drops (neutral in "2-class").
        """
        if sentiment is None:
            return self._instance(tokens, None)
        if sentiment not in self._labels:
            raise ConfigurationError(
                f"sentiment {quoted(sentiment)} is not an SST label (expected one of "
                f"{', '.join(SST_LABELS)})"
            )
        label = self._labels[sentiment]
        return None if label is None else self._instance(tokens, label)

    def _instance(self, tokens: Sequence[Union[Token, str]], label: Optional[str]) -> Instance:
        words = [token if isinstance(token, Token) else Token(token) for token in tokens]
        fields: Dict[str, Field] = {
            "tokens": TextField(words),
            "metadata": MetadataField({"words": [token.text for token in words]}),
        }
        if label is not None:
            fields["label"] = LabelField(label, label_namespace=self._label_namespace)
        return Instance(fields)

    @overrides
    def apply_token_indexers(self, instance: Instance) -> None:
        if "elmo_context" not in instance.fields:
            cast(TextField, instance["tokens"]).token_indexers = self._token_indexers
            return
        indexers = dict(self._token_indexers)
        elmo_indexer = indexers.pop(ELMO_INDEXER_KEY)
        cast(TextField, instance["tokens"]).token_indexers = indexers
        cast(TextField, instance["elmo_context"]).token_indexers = {ELMO_INDEXER_KEY: elmo_indexer}
