import bz2
import gzip
import lzma
from typing import Dict, List

import pytest
from allennlp.data.dataset_readers.dataset_reader import WorkerInfo

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.lm.dataset_readers import BilmCorpusReader

SENTENCES = "fixtures/lm/sentences.txt"


def _lines() -> List[List[str]]:
    with open(SENTENCES, encoding="utf-8") as handle:
        return [line.split() for line in handle]


def _words(instance, field: str) -> List[str]:
    return [token.text for token in instance[field].tokens]


def test_sentence_mode_gives_each_line_with_markers_as_targets():
    instances = list(BilmCorpusReader().read(SENTENCES))
    assert [_words(i, "tokens") for i in instances] == _lines()
    first = _lines()[0]
    assert _words(instances[0], "targets") == ["<S>"] + first + ["</S>"]
    assert set(instances[0].fields) == {"tokens", "targets"}


@pytest.mark.parametrize(
    "suffix,opener", [(".xz", lzma.open), (".gz", gzip.open), (".bz2", bz2.open)]
)
def test_compressed_shards_are_read_through_a_glob_in_order(tmp_path, suffix, opener):
    lines = open(SENTENCES, encoding="utf-8").read().splitlines()
    for shard, part in enumerate([lines[:25], lines[25:]]):
        with opener(tmp_path / f"shard-{shard:02d}.txt{suffix}", "wt", encoding="utf-8") as out:
            out.write("\n".join(part) + "\n")
    instances = list(BilmCorpusReader().read(str(tmp_path / f"shard-*.txt{suffix}")))
    assert [_words(i, "tokens") for i in instances] == _lines()


def test_blank_lines_and_long_sentences_are_skipped_and_counted(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a b c\n\n   \t \nd e f g h\n\ni j\n", encoding="utf-8")
    reader = BilmCorpusReader(max_sentence_length=4)
    assert [_words(i, "tokens") for i in reader.read(corpus)] == [["a", "b", "c"], ["i", "j"]]
    stats = reader.statistics
    assert (stats.sentences, stats.blank_lines, stats.long_sentences) == (2, 3, 1)


def _long_corpus(tmp_path):
    (tmp_path / "a.txt").write_text("a b c\n" + " ".join(f"x{i}" for i in range(10)) + "\nd\n")
    (tmp_path / "b.txt").write_text("e f g h i\n" + " ".join(f"y{i}" for i in range(7)) + "\n")
    return str(tmp_path / "*.txt")


def test_long_sentences_skipped_get_one_warning_per_file_with_count_longest_and_fix(
    tmp_path, caplog
):
    reader = BilmCorpusReader(max_sentence_length=4)
    with caplog.at_level("WARNING"):
        words = [_words(i, "tokens") for i in reader.read(_long_corpus(tmp_path))]
    assert words == [["a", "b", "c"], ["d"]]
    warnings = [r.getMessage() for r in caplog.records if "max_sentence_length" in r.getMessage()]
    assert warnings == [
        f"{tmp_path}/a.txt: 1 sentence(s) over max_sentence_length 4 tokens (the longest 10 "
        "tokens, line 2): skipped; to keep them, raise max_sentence_length (null: no limit) or "
        'set the reader\'s long_sentences: "split"',
        f"{tmp_path}/b.txt: 2 sentence(s) over max_sentence_length 4 tokens (the longest 7 "
        "tokens, line 2): skipped; to keep them, raise max_sentence_length (null: no limit) or "
        'set the reader\'s long_sentences: "split"',
    ]
    assert (reader.statistics.long_sentences, reader.statistics.split_sentences) == (3, 0)


def test_long_sentences_split_into_pieces_lose_no_token(tmp_path, caplog):
    reader = BilmCorpusReader(max_sentence_length=4, long_sentences="split")
    with caplog.at_level("WARNING"):
        instances = list(reader.read(_long_corpus(tmp_path)))
    x, y = [f"x{i}" for i in range(10)], [f"y{i}" for i in range(7)]
    assert [_words(i, "tokens") for i in instances] == [
        ["a", "b", "c"],
        x[:4],
        x[4:8],
        x[8:],
        ["d"],
        ["e", "f", "g", "h"],
        ["i"],
        y[:4],
        y[4:],
    ]
    assert _words(instances[2], "targets") == ["<S>"] + x[4:8] + ["</S>"]
    assert "(the longest 10 tokens, line 2): split into pieces of at most 4 tokens" in caplog.text
    stats = reader.statistics
    assert (stats.long_sentences, stats.split_sentences, stats.sentences) == (0, 3, 9)
    assert "split 3 sentence(s) over the length limit into pieces" in stats.summary()
    with pytest.raises(
        ConfigurationError, match=r"long_sentences must be one of \('skip', 'split'\)"
    ):
        BilmCorpusReader(long_sentences="cut")


def test_a_single_enormous_line_is_skipped_without_loading_it(tmp_path):
    corpus = tmp_path / "corpus.txt"
    with open(corpus, "w", encoding="utf-8") as out:
        out.write("first sentence .\n")
        out.write("word " * 2_000_000)  # 10 MB, no line break
        out.write("\nlast sentence .\n")
    reader = BilmCorpusReader(max_line_bytes=10_000)
    words = [_words(i, "tokens") for i in reader.read(corpus)]
    assert words == [["first", "sentence", "."], ["last", "sentence", "."]]
    assert reader.statistics.long_lines == 1


@pytest.mark.parametrize("content", ["", "\n\n   \n\t\n"])
def test_a_corpus_without_sentences_is_an_error(tmp_path, content):
    corpus = tmp_path / "empty.txt"
    corpus.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigurationError, match="has no sentences"):
        list(BilmCorpusReader().read(corpus))


def test_binary_garbage_names_the_file_and_line(tmp_path):
    corpus = tmp_path / "garbage.txt"
    corpus.write_bytes(b"a fine line\n" + bytes(range(128, 256)) * 10 + b"\n")
    with pytest.raises(ConfigurationError, match=r"garbage.txt, line 2: not UTF-8"):
        list(BilmCorpusReader().read(corpus))


def test_binary_data_that_happens_to_decode_is_still_an_error(tmp_path):
    corpus = tmp_path / "zeros.bin"
    corpus.write_bytes(b"a fine line\n" + b"\x00" * 5000)
    with pytest.raises(ConfigurationError, match=r"zeros.bin, line 2: NUL bytes"):
        list(BilmCorpusReader().read(corpus))


def test_a_corrupt_compressed_file_is_an_error(tmp_path):
    corpus = tmp_path / "broken.txt.xz"
    corpus.write_bytes(lzma.compress(b"a b c\n" * 1000)[:50])
    with pytest.raises(ConfigurationError, match="broken.txt.xz.*cannot decompress"):
        list(BilmCorpusReader().read(corpus))


def test_missing_files_are_errors(tmp_path):
    with pytest.raises(ConfigurationError, match="does not exist"):
        list(BilmCorpusReader().read(tmp_path / "nothing.txt"))
    with pytest.raises(ConfigurationError, match="no files match"):
        list(BilmCorpusReader().read(str(tmp_path / "*.txt.xz")))
    with pytest.raises(ConfigurationError, match="is a directory"):
        list(BilmCorpusReader().read(tmp_path))


def _packed(num_lanes: int, window_length: int, path: str = SENTENCES):
    return list(
        BilmCorpusReader(mode="packed", num_lanes=num_lanes, window_length=window_length).read(path)
    )


def test_packed_lanes_hold_the_whole_stream_in_fixed_windows() -> None:
    instances = _packed(num_lanes=3, window_length=7)
    lanes: Dict[int, List[str]] = {}
    order = [(int(i["window"].tensor), int(i["lane"].tensor)) for i in instances]
    assert order == sorted(order)  # window by window, lane 0 .. n-1 within each
    for instance in instances:
        assert len(_words(instance, "tokens")) <= 7
        lanes.setdefault(int(instance["lane"].tensor), []).extend(_words(instance, "tokens"))
    # Every sentence appears exactly once, in <S> ... </S>, each lane taking whole sentences.
    sentences = []
    for stream in lanes.values():
        text = " ".join(stream)
        assert text.startswith("<S> ") and text.endswith(" </S>")
        sentences += [s.split() for s in text[4:-5].split(" </S> <S> ")]
    assert sorted(sentences) == sorted(_lines())
    # Only each lane's last window may be short.
    full = [i for i in instances if len(_words(i, "tokens")) < 7]
    assert len(full) <= 3


def test_packed_targets_are_the_window_with_its_neighbouring_tokens() -> None:
    instances = _packed(num_lanes=2, window_length=5)
    by_lane: Dict[int, list] = {0: [], 1: []}
    for instance in instances:
        by_lane[int(instance["lane"].tensor)].append(instance)
    for windows in by_lane.values():
        stream = [word for w in windows for word in _words(w, "tokens")]
        position = 0
        for w in windows:
            tokens, targets = _words(w, "tokens"), _words(w, "targets")
            before = stream[position - 1] if position > 0 else "@@PADDING@@"
            end = position + len(tokens)
            after = stream[end] if end < len(stream) else "@@PADDING@@"
            assert targets == [before] + tokens + [after]
            position = end


def test_packed_mode_refuses_several_loader_processes():
    reader = BilmCorpusReader(mode="packed")
    reader._set_worker_info(WorkerInfo(num_workers=2, id=0))
    with pytest.raises(ConfigurationError, match="num_workers"):
        list(reader.read(SENTENCES))


def test_bad_settings_are_errors():
    with pytest.raises(ConfigurationError, match="mode"):
        BilmCorpusReader(mode="documents")
    with pytest.raises(ConfigurationError, match="max_sentence_length"):
        BilmCorpusReader(max_sentence_length=0)


def test_a_byte_order_mark_is_not_part_of_the_first_word(tmp_path):
    """Editors on Windows start UTF-8 files with a BOM, which str.split() keeps."""
    corpus = tmp_path / "bom.txt"
    corpus.write_bytes("\ufeffThe cat sat .\nThe dog ran .\n".encode("utf-8"))
    instances = list(BilmCorpusReader().read(str(corpus)))
    assert [_words(i, "tokens") for i in instances] == [
        ["The", "cat", "sat", "."],
        ["The", "dog", "ran", "."],
    ]
