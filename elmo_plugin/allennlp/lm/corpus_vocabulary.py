import logging
from collections import Counter
from typing import List, Optional

from allennlp.data.vocabulary import DEFAULT_OOV_TOKEN, DEFAULT_PADDING_TOKEN, Vocabulary

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import local_file
from elmo_plugin.allennlp.lm.corpus import (
    BILM_TF_UNKNOWN,
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


@Vocabulary.register("from_corpus", constructor="from_corpus")
class CorpusVocabulary(Vocabulary):
    """
    The word vocabulary of a `bilm` language model (namespace `tokens`), either counted
    straight from a corpus, much faster than reading instances, or read from a bilm-tf
    vocabulary file.

    Counted vocabularies hold `@@PADDING@@` (id 0), `@@UNKNOWN@@` (id 1) and then the words
    seen at least `min_count` times, `<S>` and `</S>` included, in order of descending
    frequency: the order the log-uniform sampler of the sampled softmax assumes.

    A bilm-tf vocabulary file has one token per line, most frequent first, with `<S>`, `</S>`
    and `<UNK>` (which becomes `@@UNKNOWN@@`); `allennlp elmo-export --include-softmax`
    writes one. The line order is kept.

    Registered as a `Vocabulary` with name "from_corpus".

    # Parameters

    corpus : `str`, optional
        A corpus path or glob, as for the `bilm_corpus` reader.
    vocab_file : `str`, optional
        A bilm-tf vocabulary file; give this or `corpus`.
    min_count : `int`, optional (default = `1`)
        Words seen fewer times become `@@UNKNOWN@@`.
    max_vocab_size : `int`, optional
        Keep at most this many of the most frequent words.
    max_sentence_length : `int`, optional
    long_sentences : `str`, optional (default = `"skip"`)
        As for the reader: sentences over `max_sentence_length` are not counted (`"skip"`) or
        counted in pieces (`"split"`); give the reader's values.
    max_line_bytes : `int`, optional (default = `1000000`)
    """

    @classmethod
    def from_corpus(
        cls,
        corpus: Optional[str] = None,
        vocab_file: Optional[str] = None,
        min_count: int = 1,
        max_vocab_size: Optional[int] = None,
        max_sentence_length: Optional[int] = None,
        max_line_bytes: int = MAX_LINE_BYTES,
        long_sentences: str = "skip",
    ) -> "CorpusVocabulary":
        if vocab_file is not None and corpus is None:
            words = read_bilm_tf_vocabulary(vocab_file)
        elif corpus is not None and vocab_file is None:
            if long_sentences not in LONG_SENTENCES:
                raise ConfigurationError(
                    f"from_corpus long_sentences must be one of {LONG_SENTENCES}, "
                    f"got {long_sentences!r}"
                )
            words = _count_words(
                corpus,
                min_count,
                max_vocab_size,
                max_sentence_length,
                max_line_bytes,
                long_sentences == "split",
            )
        else:
            raise ConfigurationError("the from_corpus vocabulary needs a corpus or a vocab_file")
        vocabulary = cls()
        vocabulary.add_tokens_to_namespace(words, TARGET_NAMESPACE)
        logger.info("vocabulary: %d words", vocabulary.get_vocab_size(TARGET_NAMESPACE))
        return vocabulary


def _count_words(
    corpus: str,
    min_count: int,
    max_vocab_size: Optional[int],
    max_sentence_length: Optional[int],
    max_line_bytes: int,
    split_long_sentences: bool,
) -> List[str]:
    statistics = CorpusStatistics()
    counts: Counter = Counter()
    for sentence in read_sentences(
        corpus_files(corpus),
        statistics,
        max_line_bytes,
        max_sentence_length,
        split_long_sentences,
    ):
        counts.update(sentence)
    check_not_empty(corpus, statistics)
    logger.info("counted the vocabulary of %s: %s", corpus, statistics.summary())
    counts[SENTENCE_START] += statistics.sentences
    counts[SENTENCE_END] += statistics.sentences
    for special in (DEFAULT_PADDING_TOKEN, DEFAULT_OOV_TOKEN):
        counts.pop(special, None)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    words = [word for word, count in ranked if count >= min_count]
    return words[:max_vocab_size] if max_vocab_size is not None else words


def read_bilm_tf_vocabulary(vocab_file: str) -> List[str]:
    """The words of a bilm-tf vocabulary file in line order, `<UNK>` as `@@UNKNOWN@@`."""
    path = local_file(vocab_file, "vocabulary file")
    try:
        with open(path, encoding="utf-8") as handle:
            lines = [line.rstrip("\n") for line in handle]
    except UnicodeDecodeError as error:
        raise ConfigurationError(f"{vocab_file}: not UTF-8 text ({error.reason})") from error
    words = [DEFAULT_OOV_TOKEN if line == BILM_TF_UNKNOWN else line for line in lines]
    for number, word in enumerate(words, start=1):
        if not word or word != word.strip() or len(word.split()) != 1:
            raise ConfigurationError(
                f"{vocab_file}, line {number}: expected one token per line, got {word!r}"
            )
    missing = [w for w in (SENTENCE_START, SENTENCE_END, DEFAULT_OOV_TOKEN) if w not in words]
    if missing:
        raise ConfigurationError(
            f"{vocab_file}: a bilm-tf vocabulary must list {', '.join(missing)} "
            f"(as <S>, </S> and {BILM_TF_UNKNOWN})"
        )
    if len(set(words)) != len(words):
        raise ConfigurationError(f"{vocab_file}: a token is listed twice")
    return [word for word in words if word != DEFAULT_OOV_TOKEN]
