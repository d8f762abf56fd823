"""The bulk journal is as strict as the output: every record checked on resume, a job identified
by everything its output depends on, a damaged or incomplete journal a one-line error, never
adopted, and one job at a time on an output. Also: a resumed job's progress rates, and the
thread count `elmo-embed` takes."""

import json
import logging
import os
import shutil

import pytest
import torch

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.settings import Execution
from elmo_plugin.embedding import bulk, cli, journal
from elmo_plugin.embedding.progress import Progress
from tests.paths import FIXTURES

SENTENCES = ["the cat sat", "a b", "one two three four", "x"]


class Stopped(Exception):
    """A job stopped after its last batch, before writing its output: its journal whole."""


@pytest.fixture
def text(tmp_path) -> str:
    path = tmp_path / "in.txt"
    path.write_text("".join(line + "\n" for line in SENTENCES))
    return str(path)


@pytest.fixture
def embedder(elmo_options, elmo_weights) -> ElmoEmbedder:
    return ElmoEmbedder(elmo_options, elmo_weights)


def stopped_job(monkeypatch, embedder, text: str, output: str) -> str:
    """Runs the job one sentence a batch up to its output and returns its journal folder."""

    def stop(*args, **kwargs):
        raise Stopped()

    with monkeypatch.context() as patch:
        patch.setattr(bulk, "_write_output", stop)
        with pytest.raises(Stopped):
            embedder.embed_file(text, output, batch_size=1)
    return journal.journal_folder(output)


def records(folder: str):
    part = journal.part_path(folder, 0)
    return part, list(journal._records(part))


def test_a_corrupt_record_before_the_last_is_an_error_not_copied(
    monkeypatch, tmp_path, embedder, text
):
    output = str(tmp_path / "out.hdf5")
    part, found = records(stopped_job(monkeypatch, embedder, text, output))
    assert len(found) == len(SENTENCES)
    with open(part, "r+b") as damaged:
        damaged.seek(found[0][2] - 20)  # a value of the first record
        damaged.write(b"\x00\x01\x02\x03")
    with pytest.raises(ConfigurationError, match="record at byte 0 is corrupt .*digest"):
        embedder.embed_file(text, output, batch_size=1)
    assert not os.path.exists(output)


def test_a_corrupt_record_header_is_an_error(monkeypatch, tmp_path, embedder, text):
    output = str(tmp_path / "out.hdf5")
    part, found = records(stopped_job(monkeypatch, embedder, text, output))
    second = found[1][1]
    with open(part, "r+b") as damaged:
        damaged.seek(second)
        damaged.write(b"NOTMAGIC")
    with pytest.raises(ConfigurationError, match=f"record at byte {second} is corrupt .*header"):
        embedder.embed_file(text, output, batch_size=1)


@pytest.mark.parametrize("content", ["", '{"input": "4 li', "[1, 2]", "\udcff"])
def test_a_damaged_job_file_is_a_one_line_error(monkeypatch, tmp_path, embedder, text, content):
    output = str(tmp_path / "out.hdf5")
    folder = stopped_job(monkeypatch, embedder, text, output)
    with open(os.path.join(folder, journal.JOB_FILE), "wb") as job:
        job.write(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(ConfigurationError, match="is not the JSON object of an elmo-embed job"):
        embedder.embed_file(text, output, batch_size=1)


def test_part_files_without_a_job_file_are_refused_not_adopted(
    monkeypatch, tmp_path, embedder, text
):
    output = str(tmp_path / "out.hdf5")
    folder = stopped_job(monkeypatch, embedder, text, output)
    os.remove(os.path.join(folder, journal.JOB_FILE))
    with pytest.raises(ConfigurationError, match="holds part files but no job.json"):
        embedder.embed_file(text, output, batch_size=1)
    assert os.path.exists(journal.part_path(folder, 0))


def test_other_execution_settings_are_another_job(
    monkeypatch, tmp_path, embedder, text, elmo_options, elmo_weights
):
    output = str(tmp_path / "out.hdf5")
    stopped_job(monkeypatch, embedder, text, output)
    other = ElmoEmbedder(elmo_options, elmo_weights, execution=Execution(deduplicates=False))
    with pytest.raises(ConfigurationError, match=r"differs in: execution\)"):
        other.embed_file(text, output, batch_size=1)


def test_other_elmoformanylangs_tables_are_another_job(monkeypatch, tmp_path, text):
    model = tmp_path / "efml"
    shutil.copytree(FIXTURES / "efml" / "model", model)
    output = str(tmp_path / "out.hdf5")
    stopped_job(monkeypatch, ElmoEmbedder(str(model)), text, output)
    table = (model / "char.dic").read_text(encoding="utf-8").splitlines()
    assert table[1:3] == ["b\t1", "o\t2"]
    table[1:3] = ["b\t2", "o\t1"]  # the same ids, two characters swapped
    (model / "char.dic").write_text("\n".join(table) + "\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"differs in: tables\)"):
        ElmoEmbedder(str(model)).embed_file(text, output, batch_size=1)


def test_a_second_job_on_the_output_says_another_holds_it(
    capsys, tmp_path, embedder, text, elmo_files_arguments
):
    output = str(tmp_path / "out.hdf5")
    with journal.held(output):
        with pytest.raises(
            ConfigurationError, match=f"another elmo-embed job .process {os.getpid()}"
        ):
            embedder.embed_file(text, output)
        with pytest.raises(SystemExit) as exit_:
            cli.main([text, output, *elmo_files_arguments])
        assert exit_.value.code == 2
        assert "another elmo-embed job" in capsys.readouterr().err
    embedder.embed_file(text, output)  # released
    assert sorted(os.listdir(tmp_path)) == ["in.txt", "out.hdf5"]


def test_progress_rates_after_a_resume_count_only_the_new_part(caplog):
    now = [0.0]
    progress = Progress(0, 1, sentences=110, tokens=1100, clock=lambda: now[0])
    progress.resumed(100, 1000)
    now[0] = 10.0
    with caplog.at_level(logging.INFO):
        progress.advance(10, 100)
    assert "110/110 sentences (100%), 1,100/1,100 tokens; 1 sentences/s, 10 tokens/s" in caplog.text


@pytest.mark.parametrize(
    "flag, variable, expected, said",
    [
        (["--threads", "3"], None, 3, "(--threads)"),
        ([], "1", 1, "(OMP_NUM_THREADS=1)"),
        ([], None, 1, "torch's count, set lower, kept"),
    ],
)
def test_threads_come_from_the_flag_the_variable_or_a_lower_torch_count(
    monkeypatch, caplog, flag, variable, expected, said
):
    monkeypatch.setattr(cli, "usable_cpus", lambda: (2, "2 CPUs in this test"))
    if variable is None:
        monkeypatch.delenv(cli.THREADS_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(cli.THREADS_VARIABLE, variable)
    torch.set_num_threads(1 if variable is None and not flag else 2)
    with caplog.at_level(logging.INFO):
        cli._use_usable_threads(-1, 0, int(flag[1]) if flag else None)
    assert torch.get_num_threads() == expected
    assert f"with {expected} torch threads" in caplog.text and said in caplog.text
    torch.set_num_threads(1)


def test_the_journal_records_what_identifies_the_job(monkeypatch, tmp_path, embedder, text):
    folder = stopped_job(monkeypatch, embedder, text, str(tmp_path / "out.hdf5"))
    with open(os.path.join(folder, journal.JOB_FILE)) as job:
        stored = json.load(job)
    assert sorted(stored) == ["bilm", "execution", "input", "settings", "tables"]
    assert json.loads(stored["settings"])["max_tokens"] == embedder.max_tokens
