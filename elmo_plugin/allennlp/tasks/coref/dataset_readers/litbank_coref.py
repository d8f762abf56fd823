import glob
import logging
import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union, cast

import torch
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, MetadataField, TensorField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Token
from overrides import overrides

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import quoted, text_lines
from elmo_plugin.allennlp.tasks.coref.dataset_readers.conll_coref_documents import (
    CorefDocument,
    Mention,
    canonical_clusters,
    read_documents,
)
from elmo_plugin.allennlp.tasks.reading import (
    DEFAULT_MAX_SENTENCE_LENGTH,
    check_data_file,
    check_max_length,
    require_some,
    split_long,
)

logger = logging.getLogger(__name__)

# Where a list of document files looks for them: this directory beside the list, then beside it.
DOCUMENTS_DIRECTORY = "conll"
SPAN_PADDING = -1


@DatasetReader.register("litbank_coref")
class LitbankCorefReader(DatasetReader):
    """
    Reads coreference documents in the CoNLL-2012 format as LitBank gives them (`coref/conll/
    *.conll`, one document a file; the format in `conll_coref_documents`: the word fourth, the
    coreference column last in bracket notation, the other columns not needed), for a
    span-ranking coreference model (Lee et al. 2017).

    The data path (`train_data_path` etc.) is any of:
    - a list of document files, one file name a line (LitBank's split here:
      `litbank_coref/train_docs.txt`); a relative name is looked up in the `conll/` directory
      beside the list, then beside the list itself;
    - one CoNLL file, with one or more documents (a file whose first line that is not blank
      starts with `#`, as `#begin document` does, or has tab-separated columns);
    - a directory (its `*.conll` files) or a glob pattern (`litbank_coref/conll/*.conll`),
      the files read in sorted order.

    Each document (or each segment of it, with `max_sentences` / `max_tokens`) becomes an
    `Instance` with
    - `text`, a `TextField` of its words, the sentences one after another;
    - `sentence_lengths`, a `TensorField` of the number of words of each sentence (the model
      runs ELMo and its encoder sentence by sentence);
    - `spans`, a `TensorField` `(num_spans, 2)` of every span of at most `max_span_width` words
      inside a sentence, as inclusive `(start, end)` word positions in `text`, ordered by start
      and then end (padded with -1 in a batch);
    - `span_labels`, a `TensorField` `(num_spans,)`: each span's gold cluster (an index into
      the metadata's `clusters`), -1 for a span that is no gold mention (only with gold
      clusters);
    - `metadata`, a `MetadataField` with the `words`, the `sentences` (their words), the gold
      `clusters` (lists of `(start, end)` word positions, all of them: also those no span
      covers, a mention wider than `max_span_width` or across sentences, so that the metric
      counts them as missed), the `document` name and the segment's `offset` (its first
      word's position in the document).

    The design is allennlp-models' `coref` reader and its `make_coref_instance` (not a
    dependency here): document instances, spans within sentences up to a width, span labels
    that are cluster ids, gold clusters in the metadata with clusters that share a mention
    merged. What ours differs in or adds:
    - It reads the LitBank / CoNLL-2012 files by their last column, with the path forms above;
      `coref` needs AllenNLP's `Ontonotes` reader's full CoNLL-2012 columns (with a parse bit).
    - Bad data is a `ConfigurationError` naming the file and line: a row outside a document
      or of fewer than five columns, word numbers out of step, a coreference column that is not
      bracket notation, unbalanced brackets, a document without its end or its words, a listed
      file that does not exist, bytes that are not UTF-8; an empty path is an error too.
    - `max_sentences` and `max_tokens` cut a document into consecutive segments, each an
      instance, so that every sentence is trained on; `coref`'s `max_sentences` keeps the first
      sentences of each document and drops the rest.
    - `spans` and `span_labels` are one tensor each where `coref` has a `SpanField` and a
      label per span (tens of thousands a document), which takes far longer to batch.
    - The sentence boundaries travel with the instance (`sentence_lengths`).

    Registered as a `DatasetReader` with name "litbank_coref".

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional
        (default = `{"tokens": SingleIdTokenIndexer()}`)
    max_span_width : `int`, optional (default = `10`)
        The widest candidate span, in words (98.3% of LitBank's mentions are at most 10 words).
    max_sentences : `int`, optional (default = `None`)
        At most this many sentences an instance: a longer document is cut into consecutive
        segments. `None` keeps documents whole (for evaluation).
    max_tokens : `int`, optional (default = `None`)
        At most this many words an instance (a sentence is never cut for it: a longer one is
        a segment of its own).
    remove_singleton_clusters : `bool`, optional (default = `False`)
        Drop the gold clusters of one mention (LitBank annotates singletons; CoNLL-2012 does
        not, and a span-ranking model never predicts one). They are dropped before segmenting.
    max_sentence_length : `int`, optional (default = `512`)
        A longer sentence is split into pieces of this many words, with a warning naming the
        file and line. `None` keeps every sentence whole.
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        max_span_width: int = 10,
        max_sentences: Optional[int] = None,
        max_tokens: Optional[int] = None,
        remove_singleton_clusters: bool = False,
        max_sentence_length: Optional[int] = DEFAULT_MAX_SENTENCE_LENGTH,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        if max_span_width < 1:
            raise ConfigurationError(f"max_span_width must be at least 1, got {max_span_width}")
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.max_span_width = max_span_width
        self.max_sentences = check_max_length(max_sentences, "max_sentences")
        self.max_tokens = check_max_length(max_tokens, "max_tokens")
        self.remove_singleton_clusters = remove_singleton_clusters
        self.max_sentence_length = check_max_length(max_sentence_length, "max_sentence_length")

    @overrides
    def _read(self, file_path: str) -> Iterator[Instance]:
        files = self._document_files(os.fspath(file_path))
        logger.info("Reading coreference documents from %d file(s) of %s", len(files), file_path)
        documents = require_some(self._documents(files), file_path, "documents")
        for path, document in self.shard_iterable(documents):
            sentences, first_lines = self._split_long_sentences(document, path)
            clusters = self._clusters(document.clusters)
            offset = 0
            for segment in self._segments([len(sentence) for sentence in sentences]):
                end = offset + sum(len(sentences[index]) for index in segment)
                inside = [
                    [
                        (start - offset, last - offset)
                        for start, last in cluster
                        if offset <= start and last < end
                    ]
                    for cluster in clusters
                ]
                yield self._instance(
                    [sentences[index] for index in segment],
                    [cluster for cluster in inside if cluster],
                    {"document": document.name, "offset": offset},
                )
                offset = end

    def _document_files(self, path: str) -> List[str]:
        """The CoNLL files `path` names (see the class docstring); an existing file or directory
        is taken as named, even with glob characters in its name (`train[1].conll`)."""
        expanded = os.path.expanduser(path)
        if glob.has_magic(path) and not os.path.exists(expanded):
            files = sorted(glob.glob(expanded))
            if not files:
                raise ConfigurationError(f"no file matches the data path {path!r}")
            return files
        if os.path.isdir(expanded):
            files = sorted(glob.glob(os.path.join(glob.escape(expanded), "*.conll")))
            if not files:
                raise ConfigurationError(f"the data directory {path!r} has no *.conll file")
            return files
        check_data_file(path)
        first = next((line for line in text_lines(path) if line.strip()), "#")
        is_conll = first.lstrip().startswith("#") or "\t" in first.strip()
        return [path] if is_conll else self._listed_files(path)

    @staticmethod
    def _listed_files(list_path: str) -> List[str]:
        directory = os.path.dirname(os.path.abspath(os.path.expanduser(list_path)))
        files = []
        for line_number, line in enumerate(text_lines(list_path), start=1):
            name = line.strip()
            if not name:
                continue
            name = os.path.expanduser(name)
            candidates = (
                [name]
                if os.path.isabs(name)
                else [
                    os.path.join(directory, DOCUMENTS_DIRECTORY, name),
                    os.path.join(directory, name),
                ]
            )
            found = next((candidate for candidate in candidates if os.path.isfile(candidate)), None)
            if found is None:
                raise ConfigurationError(
                    f"{list_path}, line {line_number}: the listed document file {quoted(name)} is "
                    f"not found (looked for {' and '.join(candidates)}); a list names one CoNLL "
                    f"file a line, relative to the {DOCUMENTS_DIRECTORY}/ directory beside it or "
                    "to the list's own directory"
                )
            files.append(found)
        return files

    @staticmethod
    def _documents(files: Iterable[str]) -> Iterator[Tuple[str, CorefDocument]]:
        for path in files:
            try:
                for document in read_documents(text_lines(path)):
                    yield path, document
            except ValueError as error:
                raise ConfigurationError(
                    f"{path}, {error}; expected CoNLL-2012 coreference rows: tab-separated "
                    "columns document, part, word number, word, ..., and the coreference column "
                    "last ('-', or '(12', '12)' and '(12)' joined by '|'), a blank line between "
                    "sentences, each document between '#begin document (name); part 0' and "
                    "'#end document'"
                ) from error

    def _split_long_sentences(
        self, document: CorefDocument, path: str
    ) -> Tuple[List[List[str]], List[int]]:
        sentences: List[List[str]] = []
        first_lines: List[int] = []
        for sentence, line in zip(document.sentences, document.sentence_lines):
            for piece_number, piece in enumerate(
                split_long(sentence, self.max_sentence_length, path, line)
            ):
                sentences.append(piece)
                first_lines.append(line + piece_number * (self.max_sentence_length or 0))
        return sentences, first_lines

    def _clusters(self, clusters: Iterable[Iterable[Mention]]) -> List[List[Mention]]:
        merged = canonical_clusters(clusters)
        if self.remove_singleton_clusters:
            merged = [cluster for cluster in merged if len(cluster) > 1]
        return merged

    def _segments(self, lengths: Sequence[int]) -> Iterator[List[int]]:
        """Consecutive runs of sentence indices, each within `max_sentences` and `max_tokens`."""
        segment: List[int] = []
        words = 0
        for index, length in enumerate(lengths):
            full = self.max_sentences is not None and len(segment) >= self.max_sentences
            too_long = self.max_tokens is not None and words + length > self.max_tokens
            if segment and (full or too_long):
                yield segment
                segment, words = [], 0
            segment.append(index)
            words += length
        if segment:
            yield segment

    @overrides(check_signature=False)
    def text_to_instance(
        self,
        sentences: Sequence[Sequence[Union[Token, str]]],
        gold_clusters: Optional[Sequence[Sequence[Tuple[int, int]]]] = None,
    ) -> Instance:
        """
        One instance of the whole of `sentences` (no segments: `max_sentences` and
        `max_tokens` apply to the files `_read` reads).

        # Parameters

        sentences : `Sequence[Sequence[Union[Token, str]]]`
            The words of each sentence, tokenized already.
        gold_clusters : `Sequence[Sequence[Tuple[int, int]]]`, optional
            Each gold cluster's mentions, inclusive `(start, end)` word positions counted over
            all the sentences; merged when they share a mention, singletons dropped with
            `remove_singleton_clusters`.
        """
        clusters = (
            None
            if gold_clusters is None
            else self._clusters(
                [[(int(start), int(end)) for start, end in cluster] for cluster in gold_clusters]
            )
        )
        return self._instance(sentences, clusters, {"document": "", "offset": 0})

    def _instance(
        self,
        sentences: Sequence[Sequence[Union[Token, str]]],
        clusters: Optional[List[List[Mention]]],
        extra_metadata: Dict[str, Any],
    ) -> Instance:
        sentences = [sentence for sentence in sentences if len(sentence)]
        tokens = [
            token if isinstance(token, Token) else Token(token)
            for sentence in sentences
            for token in sentence
        ]
        spans = self._enumerate_spans([len(sentence) for sentence in sentences])
        metadata: Dict[str, Any] = {
            "words": [_text(token) for token in tokens],
            "sentences": [[_text(token) for token in sentence] for sentence in sentences],
            **extra_metadata,
        }
        fields: Dict[str, Field] = {
            "text": TextField(tokens),
            "sentence_lengths": TensorField(
                torch.tensor([len(sentence) for sentence in sentences], dtype=torch.long),
                padding_value=0,
            ),
            "spans": TensorField(spans, padding_value=SPAN_PADDING),
        }
        if clusters is not None:
            cluster_of = {
                mention: index for index, cluster in enumerate(clusters) for mention in cluster
            }
            labels = [cluster_of.get((start, end), -1) for start, end in spans.tolist()]
            fields["span_labels"] = TensorField(
                torch.tensor(labels, dtype=torch.long), padding_value=-1
            )
            metadata["clusters"] = [[tuple(mention) for mention in cluster] for cluster in clusters]
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)

    def _enumerate_spans(self, lengths: Sequence[int]) -> torch.Tensor:
        """Every span of at most `max_span_width` words inside a sentence, `(num_spans, 2)`,
        ordered by start and then end."""
        pieces = []
        offset = 0
        for length in lengths:
            starts = torch.arange(length).unsqueeze(1)
            ends = starts + torch.arange(self.max_span_width).unsqueeze(0)
            valid = ends < length
            pieces.append(
                torch.stack([starts.expand_as(ends)[valid], ends[valid]], dim=-1) + offset
            )
            offset += length
        if not pieces:
            return torch.zeros((0, 2), dtype=torch.long)
        return torch.cat(pieces)

    @overrides
    def apply_token_indexers(self, instance: Instance) -> None:
        cast(TextField, instance["text"]).token_indexers = self._token_indexers


def _text(token: Union[Token, str]) -> str:
    return str(token.text) if isinstance(token, Token) else token
