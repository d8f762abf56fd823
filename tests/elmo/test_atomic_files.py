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
from elmo_plugin.elmo.files.atomic_files import replaced_when_complete
from elmo_plugin.elmo.formats.naming.package_files import refuse_overwriting
from elmo_plugin.allennlp.lm.softmax_file import read_softmax, softmax_files


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


def test_a_softmax_failing_leaves_the_previous_export_and_softmax(
    tmp_path, elmo_options, elmo_weights
):
    bilm = load_bilm(elmo_options, elmo_weights)
    words = ["@@UNKNOWN@@", "a"]
    softmax = softmax_files(
        words, numpy.ones((2, 32), numpy.float32), numpy.zeros(2, numpy.float32)
    )
    save_bilm(bilm, str(tmp_path), more_files=softmax)
    before = _contents(tmp_path)
    unwritable = numpy.array([[object()] * 32] * 2)
    with pytest.raises(TypeError):
        more = softmax_files(["@@UNKNOWN@@", "b"], unwritable, numpy.zeros(2, numpy.float32))
        save_bilm(load_bilm(elmo_options, None), str(tmp_path), more_files=more)
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

    from elmo_plugin.elmo.files import atomic_files

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


def test_a_rewrite_keeps_the_files_mode(tmp_path):
    output = tmp_path / "private.json"
    output.write_text("old")
    os.chmod(output, 0o600)
    with replaced_when_complete(str(output)) as partial:
        with open(partial, "w") as handle:
            handle.write("new")
    assert output.read_text() == "new" and (output.stat().st_mode & 0o7777) == 0o600


def test_a_rewrite_keeps_the_files_owner_and_group_where_permitted(tmp_path):
    output = tmp_path / "shared.json"
    output.write_text("old")
    if os.geteuid() == 0:  # root may give any owner
        owner, group = 12345, 23456
    else:  # others may give a group of their own
        groups = [g for g in os.getgroups() if g != os.getegid()]
        if not groups:
            pytest.skip("this user is in one group only")
        owner, group = os.geteuid(), groups[0]
    os.chown(output, owner, group)
    with replaced_when_complete(str(output)) as partial:
        open(partial, "w").close()
    assert (output.stat().st_uid, output.stat().st_gid) == (owner, group)


def test_a_255_byte_output_name_is_written(tmp_path):
    output = tmp_path / ("é" * 100 + "x" * 55)  # 255 bytes in UTF-8
    assert len(output.name.encode()) == 255
    for content in ("first", "second"):
        with replaced_when_complete(str(output)) as partial:
            assert len(os.path.basename(partial).encode()) <= 255
            with open(partial, "w") as handle:
                handle.write(content)
    assert output.read_text() == "second" and sorted(tmp_path.iterdir()) == [output]


def test_check_output_file_names_a_missing_or_unwritable_directory(tmp_path):
    from elmo_plugin.elmo.files.atomic_files import check_output_file

    with pytest.raises(ConfigurationError, match=r"directory .*nowhere does not exist"):
        check_output_file(str(tmp_path / "nowhere" / "out.json"), "--output-file")
    (tmp_path / "file").write_text("")
    with pytest.raises(
        ConfigurationError, match=r"--output-file .*file/out.json: .*file is not a directory"
    ):
        check_output_file(str(tmp_path / "file" / "out.json"), "--output-file")
    if os.geteuid() != 0:
        (tmp_path / "locked").mkdir(mode=0o500)
        with pytest.raises(ConfigurationError, match=r"locked is not writable"):
            check_output_file(str(tmp_path / "locked" / "out.json"), "--output-file")
    check_output_file(str(tmp_path / "out.json"), "--output-file")
