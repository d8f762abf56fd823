"""A `model.tar.gz` from someone else may not write outside its extraction directory: members
named `../x` or `/x`, links out of the directory and members below links are refused, with the
archive and the member named, on every path our users load archives through."""

import io
import os
import subprocess
import sys
import tarfile

import pytest
import torch

from elmo_plugin.allennlp.archives import check_members, load_checked_archive
from elmo_plugin.elmo.errors import ConfigurationError
from tests.paths import FIXTURES, PROJECT_ROOT

GOOD = os.path.join(FIXTURES, "archives", "current", "model.tar.gz")  # a bilstm_crf_tagger (NER)


def _member(name, kind=tarfile.REGTYPE, linkname="", data=b"written by the archive\n"):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, io.BytesIO(data) if kind == tarfile.REGTYPE else None


def _evil_archive(path, *extra):
    """The good NER archive with `extra` members added at its end."""
    with tarfile.open(GOOD) as good, tarfile.open(path, "w:gz") as evil:
        for member in good.getmembers():
            evil.addfile(member, good.extractfile(member) if member.isfile() else None)
        for info, data in extra:
            evil.addfile(info, data)
    return str(path)


def _escapes(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    escape = os.path.relpath(outside / "pwned.txt", "/tmp/deep/er")  # climbs from any tempdir
    return outside, {
        "dotdot": [_member("../" * 12 + str(outside / "pwned.txt").lstrip("/"))],
        "absolute": [_member(str(outside / "pwned.txt"))],
        "symlink out": [_member("vocabulary/evil", tarfile.SYMTYPE, str(outside))],
        "symlink then write through it": [
            _member("out", tarfile.SYMTYPE, str(outside)),
            _member("out/pwned.txt"),
        ],
        "relative symlink climbing": [_member("up", tarfile.SYMTYPE, escape)],
        "dot symlink chain": [
            _member("a", tarfile.SYMTYPE, "."),
            _member("a/b", tarfile.SYMTYPE, "x"),
        ],
        "below a link named ./": [_member("./c", tarfile.SYMTYPE, "."), _member("c/d")],
        "hard link out": [_member("vocabulary/hard", tarfile.LNKTYPE, "../../etc/passwd")],
        "fifo": [_member("vocabulary/pipe", tarfile.FIFOTYPE)],
    }


def test_members_that_leave_the_directory_are_refused_naming_archive_and_member(tmp_path):
    outside, cases = _escapes(tmp_path)
    for case, extra in cases.items():
        archive = _evil_archive(tmp_path / "evil.tar.gz", *extra)
        with pytest.raises(
            ConfigurationError, match=r"evil\.tar\.gz: member '.*' .*refusing"
        ) as caught:
            load_checked_archive(archive)
        assert any(
            f"member {info.name[:50]!r}"[:-1] in str(caught.value) for info, _ in extra
        ), case
        assert os.listdir(outside) == [], case


def test_a_long_member_name_is_quoted_bounded():
    with pytest.raises(ConfigurationError) as caught:
        check_members("a.tar.gz", [_member("../" + "x" * 100_000)[0]])
    assert len(str(caught.value)) < 500


def test_a_good_archive_loads_and_a_truncated_one_is_a_clear_error(tmp_path):
    assert type(load_checked_archive(GOOD).model).__name__ == "BiLstmCrfTagger"
    truncated = tmp_path / "model.tar.gz"
    truncated.write_bytes(open(GOOD, "rb").read()[:5000])
    with pytest.raises(ConfigurationError, match=r"model\.tar\.gz: not a readable model archive"):
        load_checked_archive(str(truncated))


def test_elmo_embed_archive_is_checked(monkeypatch, tmp_path):
    from allennlp.commands import main

    outside, cases = _escapes(tmp_path)
    archive = _evil_archive(tmp_path / "evil.tar.gz", *cases["dotdot"])
    (tmp_path / "in.txt").write_text("a b\n")
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "allennlp",
            "elmo-embed",
            str(tmp_path / "in.txt"),
            str(tmp_path / "o.hdf5"),
            "--archive",
            archive,
        ],
    )
    with pytest.raises(ConfigurationError, match="evil.tar.gz: member"):
        main()
    assert os.listdir(outside) == []


def test_predictor_from_path_is_checked_once_the_check_is_installed(command_changes, tmp_path):
    from allennlp.predictors import Predictor

    outside, cases = _escapes(tmp_path)
    archive = _evil_archive(tmp_path / "evil.tar.gz", *cases["absolute"])
    command_changes()
    with pytest.raises(ConfigurationError, match="evil.tar.gz: member"):
        Predictor.from_path(archive, "conll_ner")
    assert os.listdir(outside) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "command,how",
    [
        ("predict", "--include-package"),
        ("predict", ".allennlp_plugins"),
        ("evaluate", "--include-package"),
    ],
)
def test_the_allennlp_command_checks_archives(tmp_path, command, how):
    outside, cases = _escapes(tmp_path)
    archive = _evil_archive(tmp_path / "evil.tar.gz", *cases["dotdot"])
    data = os.path.join(FIXTURES, "ner", "test.txt")
    argv = [sys.executable, "-m", "allennlp", command, archive, data]
    if how == "--include-package":
        argv += ["--include-package", "elmo_plugin"]
    # .allennlp_plugins is read from the working directory: the project root has one.
    cwd = PROJECT_ROOT if how == ".allennlp_plugins" else tmp_path
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode != 0
    assert "evil.tar.gz: member" in result.stderr, result.stderr[-3000:]
    assert os.listdir(outside) == []


def test_an_archive_member_path_extracted_by_cached_path_is_checked(command_changes, tmp_path):
    """`cached_path("x.tar.gz!member", extract_archive=True)` (AllenNLP's vocabulary, sharded
    readers, `diff`) extracts the whole archive with the `cached_path` package's own check,
    which compares name prefixes: `../pathtest-x` passes it (its test directory is
    `pathtest`) and lands beside the extraction directory. Once installed, ours refuses it."""
    from allennlp.common.file_utils import cached_path

    archive = tmp_path / "data.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for info, data in [_member("train.txt"), _member("../pathtest-escaped.txt")]:
            tar.addfile(info, data)
    command_changes()
    with pytest.raises(ConfigurationError, match=r"member '../pathtest-escaped.txt'"):
        cached_path(f"{archive}!train.txt", cache_dir=tmp_path / "cache", extract_archive=True)
    assert not (tmp_path / "cache" / "pathtest-escaped.txt").exists()
    assert not any(p.name.endswith("-extracted") for p in (tmp_path / "cache").iterdir())


class _WritesAMarker:
    """Unpickled, it would create the file `marker`."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _poisoned_serialization_dir(tmp_path):
    serialization_dir = tmp_path / "model"
    with tarfile.open(GOOD) as good:
        good.extractall(serialization_dir)
    weights = serialization_dir / "weights.th"
    state = torch.load(weights)
    state["payload"] = _WritesAMarker(str(tmp_path / "marker"))
    torch.save(state, weights)
    return serialization_dir


def test_weights_that_would_run_code_are_refused_naming_the_file(tmp_path):
    """AllenNLP unpickles `weights.th` in full (on torch 1.12 nothing stops a `__reduce__`)."""
    serialization_dir = _poisoned_serialization_dir(tmp_path)
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as evil:
        for name in os.listdir(serialization_dir):
            evil.add(serialization_dir / name, name)
    for path in (archive, serialization_dir):
        with pytest.raises(ConfigurationError, match=r"weights\.th: refused to unpickle .*open"):
            load_checked_archive(str(path))
    with pytest.raises(ConfigurationError, match=r"evil\.tar\.gz/weights\.th: refused"):
        load_checked_archive(str(archive))
    assert not (tmp_path / "marker").exists()


def test_in_the_command_every_model_load_refuses_such_weights(tmp_path, command_changes):
    """`allennlp predict` or `evaluate` of a serialization directory reads its weights through
    `read_state_dict` without extracting anything: the command checks them there too."""
    from allennlp.models.archival import load_archive

    serialization_dir = _poisoned_serialization_dir(tmp_path)
    command_changes()
    with pytest.raises(ConfigurationError, match=r"weights\.th: refused to unpickle .*open"):
        load_archive(str(serialization_dir))
    assert not (tmp_path / "marker").exists()
