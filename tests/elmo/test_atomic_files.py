"""Every file the plugin writes is written whole or not at all: a temporary name beside it,
renamed once complete; a failure or Ctrl-C leaves what was there, and no partial file."""

import errno
import os
import subprocess
import sys

import numpy
import pytest

from elmo_plugin.elmo import load_bilm, save_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats import bilm_tf as bilm_tf_format
from elmo_plugin.elmo.formats.atomic_files import refuse_overwriting, replaced_when_complete
from elmo_plugin.lm.softmax_file import read_softmax, write_softmax


def _contents(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_save_bilm_interrupted_leaves_the_previous_export_whole(
    tmp_path, monkeypatch, elmo_options, elmo_weights
):
    save_bilm(load_bilm(elmo_options, elmo_weights), str(tmp_path))
    before = _contents(tmp_path)

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(bilm_tf_format, "_write_lstm_direction", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_bilm(load_bilm(elmo_options, None), str(tmp_path))
    assert _contents(tmp_path) == before
    load_bilm(str(tmp_path / "options.json"), str(tmp_path / "weights.hdf5"))


def test_write_softmax_failing_leaves_the_previous_softmax_and_vocabulary(tmp_path):
    write_softmax(
        str(tmp_path),
        ["@@UNKNOWN@@", "a"],
        numpy.ones((2, 3), numpy.float32),
        numpy.zeros(2, numpy.float32),
    )
    before = _contents(tmp_path)
    unwritable = numpy.array([[object()] * 3] * 2)
    with pytest.raises(TypeError):
        write_softmax(
            str(tmp_path), ["@@UNKNOWN@@", "b"], unwritable, numpy.zeros(2, numpy.float32)
        )
    assert _contents(tmp_path) == before
    assert read_softmax(str(tmp_path / "softmax.hdf5"))[0] == ["@@UNKNOWN@@", "a"]


def test_an_output_that_is_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with replaced_when_complete(str(link)) as partial:
        assert os.path.dirname(partial) == str(tmp_path / "real")
        with open(partial, "w") as handle:
            handle.write("new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"


def test_a_stale_partial_file_of_a_killed_writer_is_removed(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / f".out.hdf5.{int(dead.stdout)}-x1y2.partial"
    stale.write_bytes(b"half a file")
    alive = tmp_path / f".out.hdf5.{os.getppid()}-x1y2.partial"  # a writer still running
    alive.write_bytes(b"being written")
    foreign = tmp_path / ".out.hdf5.notours"
    foreign.write_bytes(b"")
    with replaced_when_complete(str(tmp_path / "out.hdf5")) as partial:
        open(partial, "w").close()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [alive.name, foreign.name, "out.hdf5"]
    )


def test_a_full_disk_names_the_file_and_its_directory(tmp_path):
    (tmp_path / "out.bin").write_bytes(b"previous")
    with pytest.raises(OSError, match=r"no space left.*out\.bin") as caught:
        with replaced_when_complete(str(tmp_path / "out.bin")):
            raise OSError(errno.ENOSPC, "No space left on device")
    assert caught.value.errno == errno.ENOSPC and str(tmp_path) in str(caught.value)
    assert _contents(tmp_path) == {"out.bin": b"previous"}


def test_a_missing_directory_names_the_output(tmp_path):
    with pytest.raises(ConfigurationError, match=r"cannot write .*nowhere/out\.bin"):
        with replaced_when_complete(str(tmp_path / "nowhere" / "out.bin")):
            pass


def test_refuse_overwriting_follows_symlinks_and_hard_links(tmp_path):
    weights = tmp_path / "weights.hdf5"
    weights.write_bytes(b"w")
    (tmp_path / "link").symlink_to(weights)
    os.link(weights, tmp_path / "hard")
    for output in ("link", "hard", "weights.hdf5", "./weights.hdf5"):
        with pytest.raises(ConfigurationError, match=r"is the --weight-file .*weights\.hdf5"):
            refuse_overwriting(
                str(tmp_path / output), {"--weight-file": str(weights), "--archive": None}
            )
    refuse_overwriting(str(tmp_path / "new.hdf5"), {"--weight-file": str(weights)})
    refuse_overwriting(str(tmp_path / "x"), {"--weight-file": "https://example.org/weights.hdf5"})


def test_save_bilm_on_a_nearly_full_disk_stops_before_hdf5_writes(
    tmp_path, monkeypatch, elmo_options, elmo_weights
):
    import collections

    from elmo_plugin.elmo.formats import atomic_files

    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(atomic_files.shutil, "disk_usage", lambda path: usage(10**9, 0, 2**20))
    with pytest.raises(OSError, match=r"no space left.*weights\.hdf5") as caught:
        save_bilm(load_bilm(elmo_options, elmo_weights), str(tmp_path))
    assert caught.value.errno == errno.ENOSPC and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_an_output_that_is_not_a_regular_file_is_refused_and_left_alone(tmp_path, kind):
    output = tmp_path / "out"
    os.mkfifo(output) if kind == "fifo" else output.mkdir()
    with pytest.raises(ConfigurationError, match=r"out is not a regular file"):
        with replaced_when_complete(str(output)) as partial:
            open(partial, "w").close()
    assert output.is_fifo() if kind == "fifo" else output.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
