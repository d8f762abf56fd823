import logging
from typing import Dict, Iterable, Iterator, List, Optional, Union, cast

import torch
from allennlp.data import DatasetReader, Instance, Token
from allennlp.data.fields import TensorField, TextField
from allennlp.data.token_indexers import (
    ELMoTokenCharactersIndexer,
    SingleIdTokenIndexer,
    TokenIndexer,
)
from allennlp.data.vocabulary import DEFAULT_PADDING_TOKEN
from overrides import overrides

from elmo_plugin.allennlp.data_paths import check_data_named
from elmo_plugin.elmo import ELMO_INDEXER_KEY
from elmo_plugin.elmo.errors import ConfigurationError

from elmo_plugin.allennlp.lm.corpus import (
    LONG_SENTENCES,
    MAX_LINE_BYTES,
    SENTENCE_END,
    SENTENCE_START,
    TARGET_NAMESPACE,
    CorpusStatistics,
    check_not_empty,
    corpus_files,
    read_sentences,
)

logger = logging.getLogger(__name__)

_MODES = ("sentences", "packed")


@DatasetReader.register("bilm_corpus")
class BilmCorpusReader(DatasetReader):
    """
    Reads a language-model corpus for the `bilm` model: plain UTF-8 text, one tokenised
    sentence per line (tokens separated by whitespace), from a file, a URL or a glob of shards
    such as `corpus/*.txt.xz`. Files ending in `.xz`, `.gz` or `.bz2` are decompressed on the
    fly. The corpus is streamed, never held in memory; use a data loader with
    `max_instances_in_memory` to keep batching lazy too.

    Empty and whitespace-only lines are skipped and counted, as are lines longer than
    `max_line_bytes`; sentences longer than `max_sentence_length` are skipped or split
    (`long_sentences`), with one warning per file giving their count and the longest. The
    counts are logged after each pass and kept in `statistics`. A file that cannot be read or
    decoded, and a corpus without a single sentence, are `ConfigurationError`s.

    Two modes:

    * `"sentences"`: each sentence is an instance, read independently (the biLM adds `<S>` and
      `</S>` around it), as ELMo is used downstream.
    * `"packed"`: bilm-tf's training stream. Sentences, each wrapped in `<S>` ... `</S>`, are
      laid back to back in `num_lanes` parallel lanes; each instance is the next
      `window_length` tokens of one lane, and the instances come lane 0 .. lane n-1 for window
      0, then for window 1, and so on, so that a data loader with `batch_size: num_lanes` and
      no shuffling gives batches whose row `i` continues row `i` of the batch before. The
      `bilm` model carries the forward LSTM state along each lane. No token is padding, and
      the targets of a window's first and last token (the tokens before and after the
      window) are included. Needs a single data-loading process (`num_workers` 0 or 1).

    Instances have `tokens` (ELMo character ids) and `targets` (word ids, namespace `tokens`,
    the sentence with `<S>` and `</S>`, or the window with its neighbouring tokens); packed
    ones also `lane` and `window`.

    In distributed training each worker reads every n-th sentence.

    Registered as a `DatasetReader` with name "bilm_corpus".

    # Parameters

    mode : `str`, optional (default = `"sentences"`)
        `"sentences"` or `"packed"`.
    max_sentence_length : `int`, optional (default = `None`)
        The most tokens of a sentence; what happens to longer ones is `long_sentences`.
    long_sentences : `str`, optional (default = `"skip"`)
        `"skip"` sentences over `max_sentence_length`, or `"split"` them into consecutive
        pieces of at most that many tokens, each read as a sentence with its own `<S>` and
        `</S>` (as bilm-tf's packed stream cuts long sentences into windows), so that no text
        is lost.
    max_line_bytes : `int`, optional (default = `1000000`)
        Skip lines longer than this many bytes (read in bounded pieces, so a file with no
        line breaks is skipped, not loaded).
    window_length : `int`, optional (default = `20`)
        Tokens per instance in packed mode (bilm-tf's `unroll_steps`).
    num_lanes : `int`, optional (default = `128`)
        Parallel lanes in packed mode; use it as the data loader's `batch_size`.
    **kwargs
        Passed to `DatasetReader` (e.g. `max_instances`).
    """

    def __init__(
        self,
        mode: str = "sentences",
        max_sentence_length: Optional[int] = None,
        long_sentences: str = "skip",
        max_line_bytes: int = MAX_LINE_BYTES,
        window_length: int = 20,
        num_lanes: int = 128,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        if mode not in _MODES:
            raise ConfigurationError(f"bilm_corpus mode must be one of {_MODES}, got {mode!r}")
        if max_sentence_length is not None and max_sentence_length < 1:
            raise ConfigurationError("max_sentence_length must be at least 1")
        if long_sentences not in LONG_SENTENCES:
            raise ConfigurationError(
                f"bilm_corpus long_sentences must be one of {LONG_SENTENCES}, "
                f"got {long_sentences!r}"
            )
        if window_length < 1 or num_lanes < 1:
            raise ConfigurationError("window_length and num_lanes must be at least 1")
        self.mode = mode
        self.max_sentence_length = max_sentence_length
        self.long_sentences = long_sentences
        self.max_line_bytes = max_line_bytes
        self.window_length = window_length
        self.num_lanes = num_lanes
        self._character_indexers: Dict[str, TokenIndexer] = {
            ELMO_INDEXER_KEY: ELMoTokenCharactersIndexer()
        }
        self._target_indexers: Dict[str, TokenIndexer] = {
            "tokens": SingleIdTokenIndexer(namespace=TARGET_NAMESPACE)
        }
        self.statistics = CorpusStatistics()

    @overrides
    def _read(self, file_path: str) -> Iterator[Instance]:
        check_data_named(str(file_path))
        self.statistics = CorpusStatistics()
        sentences = read_sentences(
            corpus_files(str(file_path)),
            self.statistics,
            self.max_line_bytes,
            self.max_sentence_length,
            split_long_sentences=self.long_sentences == "split",
        )
        if self.mode == "sentences":
            for sentence in self.shard_iterable(sentences):
                yield self.text_to_instance(sentence)
        else:
            self._check_single_process()
            yield from self._packed_instances(self.shard_iterable(sentences))
        check_not_empty(str(file_path), self.statistics)
        logger.info("bilm_corpus %s: %s", file_path, self.statistics.summary())

    @overrides(check_signature=False)
    def text_to_instance(self, sentence: Union[str, List[str]]) -> Instance:
        """An instance of one sentence, a string of whitespace-separated tokens or a list."""
        words = sentence.split() if isinstance(sentence, str) else list(sentence)
        if not words:
            raise ValueError("a bilm_corpus instance needs at least one token")
        return Instance(
            {
                "tokens": TextField([Token(word) for word in words]),
                "targets": TextField(
                    [Token(word) for word in [SENTENCE_START] + words + [SENTENCE_END]]
                ),
            }
        )

    @overrides
    def apply_token_indexers(self, instance: Instance) -> None:
        cast(TextField, instance["tokens"]).token_indexers = self._character_indexers
        cast(TextField, instance["targets"]).token_indexers = self._target_indexers

    def _check_single_process(self) -> None:
        worker_info = self.get_worker_info()
        if worker_info is not None and worker_info.num_workers > 1:
            raise ConfigurationError(
                "bilm_corpus in packed mode needs its lanes read in order by one process; "
                f"set the data loader's num_workers to 0 or 1 (got {worker_info.num_workers})"
            )

    def _packed_instances(self, sentences: Iterable[List[str]]) -> Iterator[Instance]:
        stream = (
            token
            for sentence in sentences
            for token in [SENTENCE_START] + sentence + [SENTENCE_END]
        )
        lanes = [_Lane() for _ in range(self.num_lanes)]
        window = 0
        while True:
            emitted = False
            for lane_index, lane in enumerate(lanes):
                tokens = lane.take(stream, self.window_length)
                if not tokens:
                    continue
                emitted = True
                yield self._packed_instance(lane, tokens, lane_index, window)
            if not emitted:
                return
            window += 1

    def _packed_instance(
        self, lane: "_Lane", tokens: List[str], lane_index: int, window: int
    ) -> Instance:
        before = lane.previous or DEFAULT_PADDING_TOKEN
        after = lane.peek() or DEFAULT_PADDING_TOKEN
        targets = [before] + tokens + [after]
        lane.previous = tokens[-1]
        return Instance(
            {
                "tokens": TextField([Token(token) for token in tokens]),
                "targets": TextField([Token(token) for token in targets]),
                "lane": TensorField(torch.tensor(lane_index)),
                "window": TensorField(torch.tensor(window)),
            }
        )


class _Lane:
    """One lane of the packed stream: the tokens it has pulled but not yet emitted, and the
    last token it emitted (the backward target of its next window's first token)."""

    def __init__(self) -> None:
        self.buffer: List[str] = []
        self.previous: Optional[str] = None

    def take(self, stream: Iterator[str], count: int) -> List[str]:
        # One token beyond the window, so that its last token's target is known.
        while len(self.buffer) < count + 1 and self._pull_sentence(stream):
            pass
        taken, self.buffer = self.buffer[:count], self.buffer[count:]
        return taken

    def peek(self) -> Optional[str]:
        return self.buffer[0] if self.buffer else None

    def _pull_sentence(self, stream: Iterator[str]) -> bool:
        """Moves the shared stream's next sentence (through its `</S>`) into this lane."""
        for token in stream:
            self.buffer.append(token)
            if token == SENTENCE_END:
                return True
        return False
