"""text_lines splits where a text editor does (\\n, \\r\\n, a lone \\r) and nowhere else: not
inside a UTF-8 character holding byte 0x85 (NEL in latin-1) nor at Unicode line separators."""

from elmo_plugin.embedding.text_files import quoted, text_lines


def test_only_cr_lf_and_crlf_end_lines(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_bytes("\ufeffÅ b\u2028c\r\nd\x0be\x0cf\x1cg\rh\nlast".encode("utf-8"))
    assert list(text_lines(str(path))) == ["Å b\u2028c\n", "d\x0be\x0cf\x1cg\n", "h\n", "last"]


def test_quoted_is_bounded():
    assert len(quoted("x" * 10_000)) < 210 and quoted("ab") == "'ab'" and quoted(3) == "3"
