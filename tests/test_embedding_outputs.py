"""`elmo-embed`'s outputs beside per-token float32 hdf5: pooled presets, each against its
tool's own definition, float16, Parquet, and one shard a process under torchrun, resumed per
rank and per shard after a kill -9."""

import collections
import os
import signal
import time
from typing import Callable, Dict, List

import numpy
import pytest

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding import cli, journal, shards
from elmo_plugin.embedding.outputs import EmbeddingOutput
from elmo_plugin.embedding.shards import open_embeddings
from tests.ranks import become_rank, free_port
from tests.test_bulk_embedding import command, input_file, one_thread  # noqa: F401
from tests.test_bulk_embedding import run_in_child

pyarrow = pytest.importorskip("pyarrow")
# A forked rank's exit status when `run_in_child` saw it killed.
KILLED = -signal.SIGKILL & 0xFF


def _embed(arguments, output, *options: str) -> List[numpy.ndarray]:
    cli.main([*arguments(output), *options])
    return list(open_embeddings(str(output)))


# Each tool's definition, written as the tool computes it on its padded batch arrays.
def _tfhub_default(padded: numpy.ndarray, lengths: List[int]) -> numpy.ndarray:
    """TF-Hub: `elmo` (the layers' mean at the module's weights) summed under the mask, over
    the mask's sum."""
    elmo = padded.mean(axis=1)
    mask = numpy.arange(padded.shape[2])[None, :] < numpy.array(lengths)[:, None]
    with numpy.errstate(invalid="ignore"):
        return (elmo * mask[..., None]).sum(axis=1) / mask.sum(axis=1)[:, None]


def _simple_elmo_average(padded: numpy.ndarray, lengths: List[int]) -> numpy.ndarray:
    """simple_elmo: the padded rows of `layers="average"` summed, over the padded length, then
    divided by the L2 norm."""
    averaged = padded.mean(axis=1)
    fingerprint = averaged.sum(axis=1) / averaged.shape[1]
    with numpy.errstate(invalid="ignore"):
        return fingerprint / numpy.linalg.norm(fingerprint, axis=1, keepdims=True)


def _seqvec_protein(padded: numpy.ndarray, lengths: List[int]) -> numpy.ndarray:
    """SeqVec: `embedding.sum(0).mean(0)` of each sequence's own layers."""
    with numpy.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        return numpy.stack([padded[row, :, :n].sum(0).mean(0) for row, n in enumerate(lengths)])


@pytest.mark.parametrize(
    "preset,definition",
    [
        ("tfhub-default", _tfhub_default),
        ("simple-elmo-average", _simple_elmo_average),
        ("seqvec-protein", _seqvec_protein),
    ],
)
def test_each_preset_is_its_tools_definition(
    tmp_path, input_file, command, elmo_options, elmo_weights, preset, definition  # noqa: F811
):
    sentences = [line.split() for line in input_file.read_text().splitlines()]
    padded = ElmoEmbedder(elmo_options, elmo_weights).embed(sentences, layers="all")
    expected = definition(padded, [len(sentence) for sentence in sentences])
    pooled = numpy.stack(_embed(command, tmp_path / "pooled.hdf5", "--pool", preset))
    assert pooled.shape == (len(sentences), 32) and numpy.isnan(pooled[20]).all()
    numpy.testing.assert_allclose(pooled, expected, rtol=0, atol=2e-6)


def test_mean_pools_the_chosen_layer_and_float16_is_the_cast_of_float32(
    tmp_path, command  # noqa: F811
):
    top = _embed(command, tmp_path / "top.hdf5", "--output-format", "top")
    pooled = _embed(command, tmp_path / "m.hdf5", "--output-format", "top", "--pool", "mean")
    numpy.testing.assert_allclose(pooled[3], top[3].mean(axis=0), rtol=0, atol=1e-6)
    halves = _embed(
        command, tmp_path / "h.hdf5", "--output-format", "top", "--output-dtype", "float16"
    )
    assert all(h.tobytes() == t.astype(numpy.float16).tobytes() for h, t in zip(halves, top))
    with pytest.raises(ConfigurationError, match="pool 'seqvec-protein' combines the layers"):
        EmbeddingOutput(pool="seqvec-protein").checked("o.hdf5", "top", False)


def test_a_value_beyond_float16_is_an_error_naming_its_line(tmp_path, command):  # noqa: F811
    from elmo_plugin.embedding import outputs

    with pytest.raises(ConfigurationError, match=r"in.txt, line 3: 1 values are beyond float16"):
        outputs.in_dtype(numpy.array([1.0, 7e4], "float32"), "float16", "in.txt", 2)


@pytest.mark.parametrize(
    "options,nesting",
    [
        ([], "fixed_size_list<element: large_list<element: fixed_size_list<element: halffloat"),
        (
            ["--pool", "mean"],
            "fixed_size_list<element: fixed_size_list<element: halffloat>[32]>[3]",
        ),
    ],
)
def test_parquet_holds_one_row_a_line_in_order_equal_to_hdf5(
    tmp_path, command, input_file, options, nesting  # noqa: F811
):
    hdf5 = _embed(command, tmp_path / "o.hdf5", *options)
    parquet = _embed(command, tmp_path / "o.parquet", *options, "--output-dtype", "float16")
    assert [p.tobytes() for p in parquet] == [h.astype("float16").tobytes() for h in hdf5]
    table = pyarrow.parquet.read_table(tmp_path / "o.parquet")
    assert table.column("line").to_pylist() == list(range(len(hdf5)))
    assert table.column("sentence").to_pylist() == input_file.read_text().splitlines()
    assert str(table.schema.field("embedding").type).startswith(nesting)


def _ranks(arguments, output, work: Callable[[int], None] = lambda rank: None) -> List[int]:
    """Runs `elmo-embed --shards` as 2 forked processes of a gloo group (each doing `work(rank)`
    first): their exit statuses, `KILLED` for a killed one (a stuck one is after 120 s)."""
    port = str(free_port())

    def rank(number: int) -> Callable[[], None]:
        def run():
            become_rank(number, port)
            work(number)
            cli.main([*arguments(output), "--shards"])

        return run

    pids = []
    for number in (0, 1):
        pid = os.fork()
        if pid == 0:
            os._exit(run_in_child(rank(number)) & 0xFF)
        pids.append(pid)
    return [_wait(pid, time.monotonic() + 120) for pid in pids]


def _wait(pid: int, deadline: float) -> int:
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return KILLED


def test_two_ranks_shards_read_back_as_the_one_process_file_resumed_per_rank(
    monkeypatch, tmp_path, command  # noqa: F811
):
    one_thread(monkeypatch)
    single = tmp_path / "single.hdf5"
    assert run_in_child(lambda: cli.main(command(single))) == 0
    embedded = tmp_path / "embedded.txt"
    real_append, real_record = journal.append_batch, shards.record_shard

    def logging_appends(rank: int, kill_at: Dict[str, int]) -> None:
        """Logs each batch a rank journals; kills rank 1 at its `kill_at` point."""

        def append(path, batch, *args):
            with open(embedded, "a") as log:
                log.write(f"{rank}\n")
            if rank == 1 and kill_at.get("batch") == batch:
                os.kill(os.getpid(), signal.SIGKILL)
            real_append(path, batch, *args)

        def record(folder, path, *args):
            real_record(folder, path, *args)
            if rank == 1 and kill_at.get("shard"):
                os.kill(os.getpid(), signal.SIGKILL)

        journal.append_batch, shards.record_shard = append, record

    manifest = tmp_path / "embeddings.json"
    # Killed at its second batch: rank 0 embeds its share and then fails, its peer gone.
    first = _ranks(command, manifest, lambda rank: logging_appends(rank, {"batch": 3}))
    assert first[1] == KILLED and first[0] != 0
    before = collections.Counter(embedded.read_text().split())
    embedded.unlink()
    # Killed once its shard is written: the rerun keeps both shards and embeds nothing.
    second = _ranks(command, manifest, lambda rank: logging_appends(rank, {"shard": 1}))
    assert second[1] == KILLED
    after_kill = collections.Counter(embedded.read_text().split())
    assert after_kill["0"] == 0 and after_kill["1"] > 0
    written = {p.name: p.stat().st_ino for p in tmp_path.glob("embeddings-*.hdf5")}
    embedded.unlink()
    assert _ranks(command, manifest, lambda rank: logging_appends(rank, {})) == [0, 0]
    assert not embedded.exists()
    assert {p.name: p.stat().st_ino for p in tmp_path.glob("embeddings-*.hdf5")} == written
    assert sorted(written) == ["embeddings-00000-of-00002.hdf5", "embeddings-00001-of-00002.hdf5"]
    ours, reference = open_embeddings(str(manifest)), open_embeddings(str(single))
    assert len(ours) == len(reference) == 23
    assert [a.tobytes() for a in ours] == [b.tobytes() for b in reference]
    assert ours[21].shape == (3, 150, 32) and before["0"] > 0
    assert not [p for p in tmp_path.iterdir() if ".elmo-embed-" in p.name]


def test_a_shard_changed_since_the_manifest_is_refused(tmp_path, command):  # noqa: F811
    manifest = tmp_path / "one.json"
    cli.main([*command(manifest), "--shards", "--output-file-format", "parquet"])
    assert len(open_embeddings(str(manifest))) == 23
    (tmp_path / "one-00000-of-00001.parquet").write_bytes(b"PAR1")
    with pytest.raises(ConfigurationError, match="one-00000-of-00001.parquet is missing, or its"):
        open_embeddings(str(manifest))
