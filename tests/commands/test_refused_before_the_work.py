"""Every output and input mistake of `elmo-embed` (and `elmo-perplexity`) is one line before
any biLM or sentence is read, and leaves nothing behind: no journal, no hidden folder."""

import os
import sys

import pytest
from allennlp.commands import main as allennlp_main

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding import cli, journal
from elmo_plugin.embedding.elmo_embedder import embed_file
from elmo_plugin.elmo import load_bilm
from tests.paths import FIXTURES

INPUT = str(FIXTURES / "lm" / "sentences.txt")
READ_ONLY_FILE_SYSTEM = "/sys"  # sysfs refuses new files, to root too


@pytest.fixture
def never_embeds(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the check must come before the biLM is loaded")

    monkeypatch.setattr(cli, "embed", never)


def refused(capsys, arguments, elmo_files_arguments) -> str:
    """The one line `elmo-embed` exits with (status 2) for `arguments`."""
    with pytest.raises(SystemExit) as exit_:
        cli.main([*arguments, *elmo_files_arguments])
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("elmo-embed: error: "), lines
    return lines[0]


def hidden_entries(folder) -> list:
    return sorted(name for name in os.listdir(folder) if name.startswith("."))


def _fifo(tmp_path) -> str:
    os.mkfifo(tmp_path / "fifo")
    return str(tmp_path / "fifo")


def _below_a_file(tmp_path) -> str:
    (tmp_path / "a-file").write_text("kept")
    return str(tmp_path / "a-file" / "out.hdf5")


def _read_only_folder(tmp_path) -> str:
    if os.geteuid() == 0:
        pytest.skip("root writes into a folder without write permission")
    (tmp_path / "read-only").mkdir(mode=0o555)
    return str(tmp_path / "read-only" / "out.hdf5")


OUTPUTS = {
    "/dev/null": (lambda tmp_path: "/dev/null", "is not a regular file"),
    "a directory": (lambda tmp_path: str(tmp_path), "is not a regular file"),
    "a FIFO": (_fifo, "is not a regular file"),
    "a read-only file system": (
        lambda tmp_path: f"{READ_ONLY_FILE_SYSTEM}/out.hdf5",
        "is not writable",
    ),
    "a read-only folder": (_read_only_folder, "is not writable"),
    "below a regular file": (_below_a_file, "a-file is not a directory"),
    "in a missing folder": (
        lambda tmp_path: str(tmp_path / "missing" / "out.hdf5"),
        "does not exist; create it first",
    ),
    "an elmo_plugin:// name": (
        lambda tmp_path: "elmo_plugin://out.hdf5",
        "an output is a local path",
    ),
}


@pytest.mark.parametrize("case", sorted(OUTPUTS))
def test_an_output_that_cannot_be_written_is_one_line_before_the_work(
    capsys, monkeypatch, tmp_path, never_embeds, elmo_files_arguments, case
):
    monkeypatch.chdir(tmp_path)
    make, message = OUTPUTS[case]
    output = make(tmp_path)
    before = sorted(os.listdir(tmp_path))
    dev_before = hidden_entries("/dev")
    line = refused(capsys, [INPUT, output], elmo_files_arguments)
    assert message in line
    assert sorted(os.listdir(tmp_path)) == before
    assert hidden_entries("/dev") == dev_before
    assert not os.path.exists(tmp_path / "elmo_plugin:")


INPUTS = {
    "missing": (lambda tmp_path: str(tmp_path / "nope.txt"), "no such file or folder"),
    "a directory": (lambda tmp_path: str(tmp_path), "is a folder"),
}


@pytest.mark.parametrize("case", sorted(INPUTS))
def test_an_input_that_cannot_be_read_is_one_line_before_the_work(
    capsys, tmp_path, never_embeds, elmo_files_arguments, case
):
    make, message = INPUTS[case]
    before = sorted(os.listdir(tmp_path))
    line = refused(capsys, [make(tmp_path), str(tmp_path / "out.hdf5")], elmo_files_arguments)
    assert message in line and "nope.txt" in line if case == "missing" else message in line
    assert sorted(os.listdir(tmp_path)) == before


def test_a_file_where_the_journal_goes_is_one_line_before_the_work(
    capsys, tmp_path, never_embeds, elmo_files_arguments
):
    output = str(tmp_path / "out.hdf5")
    with open(journal.journal_folder(output), "w") as in_the_way:
        in_the_way.write("a user's file")
    line = refused(capsys, [INPUT, output], elmo_files_arguments)
    assert "is a file, not elmo-embed's journal folder" in line


def test_embed_file_to_an_elmo_plugin_name_writes_no_literal_folder(
    monkeypatch, tmp_path, elmo_options, elmo_weights
):
    monkeypatch.chdir(tmp_path)
    bilm = load_bilm(elmo_options, elmo_weights)
    with pytest.raises(ConfigurationError, match="an output is a local path"):
        embed_file(bilm, INPUT, "elmo_plugin://out.hdf5")
    assert os.listdir(tmp_path) == []


def test_a_run_that_fails_before_its_first_batch_leaves_no_journal(
    monkeypatch, tmp_path, elmo_files_arguments
):
    from elmo_plugin.embedding import bulk

    def fails(*args, **kwargs):
        raise ConfigurationError("the first batch failed")

    monkeypatch.setattr(bulk, "embed_planned_batch", fails)
    with pytest.raises(SystemExit):
        cli.main([INPUT, str(tmp_path / "out.hdf5"), *elmo_files_arguments])
    assert os.listdir(tmp_path) == []


def test_elmo_perplexity_refuses_a_missing_output_folder_as_elmo_embed_does(monkeypatch, tmp_path):
    from elmo_plugin.allennlp.lm import perplexity

    def never(*args, **kwargs):
        raise AssertionError("the check must come before the evaluation")

    monkeypatch.setattr(perplexity, "export_perplexity", never)
    for text, output, message in (
        (INPUT, str(tmp_path / "missing" / "m.json"), "does not exist; create it first"),
        (str(tmp_path / "nope.txt"), str(tmp_path / "m.json"), "no such file or folder"),
        (str(tmp_path), str(tmp_path / "m.json"), "is a folder"),
    ):
        argv = ["allennlp", "elmo-perplexity", "small", text, "--output-file", output]
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(ConfigurationError, match=message):
            allennlp_main()
    assert os.listdir(tmp_path) == []
