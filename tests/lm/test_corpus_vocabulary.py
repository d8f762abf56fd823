import pytest
from allennlp.common import Params
from allennlp.data import Vocabulary

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.lm.corpus_vocabulary import CorpusVocabulary


def _corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("the cat sat\nthe dog sat\n\nthe cat ran\nzebra\n", encoding="utf-8")
    return str(path)


def _words(vocabulary):
    return [
        vocabulary.get_token_from_index(i, "tokens")
        for i in range(vocabulary.get_vocab_size("tokens"))
    ]


def test_counted_vocabulary_is_ordered_by_descending_frequency(tmp_path):
    vocabulary = Vocabulary.from_params(
        Params({"type": "from_corpus", "corpus": _corpus(tmp_path)})
    )
    # 4 sentences: <S> and </S> 4 times each, "the" 3 times, then cat and sat twice, ...
    assert _words(vocabulary) == [
        "@@PADDING@@",
        "@@UNKNOWN@@",
        "</S>",
        "<S>",
        "the",
        "cat",
        "sat",
        "dog",
        "ran",
        "zebra",
    ]


def test_long_sentences_are_counted_as_the_reader_reads_them(tmp_path):
    corpus = _corpus(tmp_path)
    skipped = _words(CorpusVocabulary.from_corpus(corpus=corpus, max_sentence_length=2))
    split = _words(
        CorpusVocabulary.from_corpus(corpus=corpus, max_sentence_length=2, long_sentences="split")
    )
    assert skipped[2:] == ["</S>", "<S>", "zebra"]
    # 3 sentences of 3 tokens in 2 pieces each, and zebra: 7 sentences.
    assert split[2:] == ["</S>", "<S>", "the", "cat", "sat", "dog", "ran", "zebra"]
    with pytest.raises(ConfigurationError, match="long_sentences must be one of"):
        CorpusVocabulary.from_corpus(corpus=corpus, long_sentences="cut")


def test_min_count_and_max_vocab_size_cut_the_rare_words(tmp_path):
    corpus = _corpus(tmp_path)
    assert _words(CorpusVocabulary.from_corpus(corpus=corpus, min_count=2))[2:] == [
        "</S>",
        "<S>",
        "the",
        "cat",
        "sat",
    ]
    assert _words(CorpusVocabulary.from_corpus(corpus=corpus, max_vocab_size=3))[2:] == [
        "</S>",
        "<S>",
        "the",
    ]


def test_bilm_tf_vocabulary_file_keeps_its_order(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("<S>\n</S>\n<UNK>\nthe\ncat\n", encoding="utf-8")
    vocabulary = CorpusVocabulary.from_corpus(vocab_file=str(path))
    assert _words(vocabulary) == ["@@PADDING@@", "@@UNKNOWN@@", "<S>", "</S>", "the", "cat"]


@pytest.mark.parametrize(
    "content,message",
    [
        ("<S>\n</S>\nthe\n", "must list @@UNKNOWN@@"),
        ("<S>\n<UNK>\nthe\n", "must list </S>"),
        ("<S>\n</S>\n<UNK>\nthe cat\n", "line 4: expected one token per line"),
        ("<S>\n</S>\n<UNK>\nthe\nthe\n", "listed twice"),
    ],
)
def test_bad_vocabulary_files_are_errors(tmp_path, content, message):
    path = tmp_path / "vocab.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=message):
        CorpusVocabulary.from_corpus(vocab_file=str(path))


def test_needs_exactly_one_source(tmp_path):
    with pytest.raises(ConfigurationError, match="needs a corpus or a vocab_file"):
        CorpusVocabulary.from_corpus()
    with pytest.raises(ConfigurationError, match="has no sentences"):
        empty = tmp_path / "empty.txt"
        empty.write_text("\n\n", encoding="utf-8")
        CorpusVocabulary.from_corpus(corpus=str(empty))
