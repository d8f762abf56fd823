"""Bulk `elmo-embed`: sorted batches under a token budget, long sequences in windows, a device
out of memory, resuming after kill -9 byte for byte, 2 processes writing one process's file.

The killed and the distributed runs are forked children of the test process (one thread each,
so no OpenMP pool crosses the fork): a real SIGKILL, without a fresh interpreter's imports."""

import collections
import json
import os
import random
import signal
import traceback
from typing import Any, Callable, List

import h5py
import numpy
import pytest
import torch

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding import cli, journal, outputs
from elmo_plugin.embedding.bulk import plan_batches
from elmo_plugin.embedding.long_sequences import embed_long_sequence
from elmo_plugin.embedding.threads import cpu_quota
from tests.ranks import become_rank, free_port


def run_in_child(work: Callable[[], None]) -> int:
    """Runs `work` in a forked child with one torch thread; its exit status, or minus the
    signal that ended it."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            torch.set_num_threads(1)
            work()
        except BaseException:  # noqa: B902 - reported to the parent by the exit status
            traceback.print_exc()
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def kill_myself() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.fixture
def input_file(sentences_file, sentences):
    random.seed(1)
    document = [random.choice("ACDEFGHIKLMNPQRSTVWY") for _ in range(150)]
    return sentences_file(sentences[:20] + [[], document, sentences[0]], "in.txt")


@pytest.fixture
def command(input_file, elmo_files_arguments) -> Callable[[Any], List[str]]:
    """The `elmo-embed` arguments that embed `input_file` into `output` in small runs."""

    def arguments(output: Any) -> List[str]:
        runs = ["--batch-size", "4", "--max-tokens", "64"]
        return [str(input_file), str(output), *elmo_files_arguments, *runs]

    return arguments


def one_thread(monkeypatch) -> None:
    monkeypatch.setattr(cli, "usable_cpus", lambda: (1, "one CPU in this test"))


def test_plan_sorts_by_length_within_both_budgets():
    lengths = [3, 10, 1, 10, 40, 2]
    assert plan_batches(lengths, batch_size=2, max_tokens=30) == [[4], [1, 3], [0, 5], [2]]
    # File order: consecutive lines, cut by the same budgets.
    assert plan_batches(lengths, 2, 30, by_length=False) == [[0, 1], [2, 3], [4], [5]]


def test_a_20000_token_sequence_in_windows_equals_the_whole_run(elmo_options, elmo_weights):
    random.seed(0)
    sequence = [random.choice("ACDEFGHIKLMNPQRSTVWY") for _ in range(20000)]
    whole = ElmoEmbedder(elmo_options, elmo_weights, max_tokens=10**6)
    runs: List[int] = []
    whole.elmo_bilm.lstm.register_forward_pre_hook(
        lambda _, args: runs.append(args[0].size(0) * args[0].size(1))
    )
    windowed = embed_long_sequence(whole.elmo_bilm, sequence, max_tokens=4096)
    assert max(runs) <= 4096 and len(runs) == 10
    expected = whole.embed_sentence(sequence)
    assert windowed.shape == expected.shape == (3, 20000, 32)
    numpy.testing.assert_allclose(windowed, expected, atol=2e-6, rtol=0)


def test_a_device_out_of_memory_splits_the_batch_and_then_the_windows(
    monkeypatch, elmo_options, elmo_weights, sentences, caplog
):
    embedder = ElmoEmbedder(elmo_options, elmo_weights, max_tokens=10**6)
    expected = embedder.embed_batch(sentences[:6] + [["x"] * 40])
    real_lstm = type(embedder.elmo_bilm.lstm).forward

    def small_device(lstm, inputs, *args, **kwargs):
        if inputs.size(0) * inputs.size(1) > 30:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real_lstm(lstm, inputs, *args, **kwargs)

    monkeypatch.setattr(type(embedder.elmo_bilm.lstm), "forward", small_device)
    ours = embedder.embed_batch(sentences[:6] + [["x"] * 40])
    for mine, theirs in zip(ours, expected):
        numpy.testing.assert_allclose(mine, theirs, atol=2e-6, rtol=0)
    assert "embedding them in two halves" in caplog.text
    assert "embedding it in windows of" in caplog.text
    monkeypatch.setattr(
        type(embedder.elmo_bilm.lstm),
        "forward",
        lambda *a, **k: (_ for _ in ()).throw(RuntimeError("some other failure")),
    )
    with pytest.raises(RuntimeError, match="some other failure"):
        embedder.embed_batch(sentences[:2])


def _interrupted(point: str) -> Callable[[], None]:
    """A patch that kills the process at `point` of a job (in the child only)."""
    calls = {"n": 0}
    real_append, real_write, real_remove = (
        journal.append_batch,
        outputs.write_hdf5,
        journal.remove_journal,
    )

    def append(path, batch, lines, layers):
        calls["n"] += 1
        if point == "first batch" or (point == "fourth batch" and calls["n"] == 4):
            kill_myself()
        if point == "half a record" and calls["n"] == 2:
            real_append(path + ".whole", batch, lines, layers)
            with open(path + ".whole", "rb") as whole, open(path, "ab") as part:
                part.write(whole.read()[:-40])
            kill_myself()
        real_append(path, batch, lines, layers)

    def write(output, lines, layers_of, *args):
        if point != "third dataset":
            return real_write(output, lines, layers_of, *args)

        def killing(number: int) -> numpy.ndarray:
            if number == 2:
                kill_myself()
            return layers_of(number)

        return real_write(output, lines, killing, *args)

    def remove(folder):
        if point == "before the journal is removed":
            kill_myself()
        real_remove(folder)

    def patch():
        journal.append_batch, outputs.write_hdf5, journal.remove_journal = append, write, remove

    return patch


def test_killed_at_any_point_a_rerun_gives_the_same_bytes_embedding_nothing_twice(
    monkeypatch, tmp_path, command
):
    one_thread(monkeypatch)
    embedded = tmp_path / "embedded.txt"
    real_embed_batch = ElmoEmbedder.embed_batch

    def logged(self, batch):
        with open(embedded, "a") as log:
            log.write(json.dumps(batch) + "\n")
        return real_embed_batch(self, batch)

    monkeypatch.setattr(ElmoEmbedder, "embed_batch", logged)
    reference, output = tmp_path / "reference.hdf5", tmp_path / "out.hdf5"
    assert run_in_child(lambda: cli.main(command(reference))) == 0
    uninterrupted = collections.Counter(embedded.read_text().splitlines())
    embedded.unlink()
    points = [
        "first batch",
        "half a record",
        "fourth batch",
        "third dataset",
        "before the journal is removed",
    ]
    for point in points:
        patch = _interrupted(point)

        def killed_run():
            patch()
            cli.main(command(output))

        assert run_in_child(killed_run) == -signal.SIGKILL, point
    assert run_in_child(lambda: cli.main(command(output))) == 0
    assert output.read_bytes() == reference.read_bytes()
    assert not [p for p in tmp_path.iterdir() if ".elmo-embed-" in p.name]
    runs = collections.Counter(embedded.read_text().splitlines())
    # A batch is embedded again only when a kill came before its record was whole on disk
    # (the first three points); none whose record was written.
    assert not uninterrupted - runs and sum((runs - uninterrupted).values()) == 3


def test_a_journal_of_other_settings_is_refused_not_overwritten(
    tmp_path, input_file, elmo_options, elmo_weights
):
    output = tmp_path / "out.hdf5"
    folder = journal.journal_folder(str(output))
    os.makedirs(folder)
    with open(os.path.join(folder, journal.JOB_FILE), "w") as job:
        json.dump({"input": "other", "bilm": "other", "settings": "{}"}, job)
    with pytest.raises(ConfigurationError, match="another embedding job .*delete"):
        bilm = ElmoEmbedder(elmo_options, elmo_weights).elmo_bilm
        from elmo_plugin.embedding.elmo_embedder import embed_file

        embed_file(bilm, str(input_file), str(output))
    assert os.path.exists(os.path.join(folder, journal.JOB_FILE))


def test_two_processes_write_the_single_process_file(monkeypatch, tmp_path, command):
    one_thread(monkeypatch)
    single, shared = tmp_path / "single.hdf5", tmp_path / "shared.hdf5"
    assert run_in_child(lambda: cli.main(command(single))) == 0
    port = str(free_port())

    def rank(number: int) -> Callable[[], None]:
        def work():
            become_rank(number, port)
            cli.main(command(shared))

        return work

    pids = []
    for number in (0, 1):
        pid = os.fork()
        if pid == 0:
            os._exit(run_in_child(rank(number)))
        pids.append(pid)
    assert [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids] == [0, 0]
    assert shared.read_bytes() == single.read_bytes()
    with h5py.File(shared) as written:
        assert written["20"].shape == (3, 0, 32) and written["21"].shape == (3, 150, 32)


def test_a_nul_in_a_sentence_key_is_refused_before_any_work(tmp_path, elmo_options, elmo_weights):
    (tmp_path / "in.txt").write_text("a b\nc \x00 d\n")
    embedder = ElmoEmbedder(elmo_options, elmo_weights)
    with pytest.raises(ConfigurationError, match=r"in.txt, line 2: .*NUL"):
        embedder.embed_file(
            str(tmp_path / "in.txt"), str(tmp_path / "o.hdf5"), use_sentence_keys=True
        )
    assert not (tmp_path / "o.hdf5").exists()


@pytest.mark.parametrize(
    "files,expected",
    [
        ({"cpu.max": "150000 100000\n"}, 1.5),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 0.5),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    ],
)
def test_the_cgroup_cpu_quota_is_read_from_v2_and_v1(monkeypatch, tmp_path, files, expected):
    from elmo_plugin.embedding import threads

    monkeypatch.setattr(threads, "_cgroup_paths", lambda: ["/"])
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cpu_quota(str(tmp_path)) == expected
    if expected is not None:
        assert threads.usable_cpus(str(tmp_path))[0] == 1
