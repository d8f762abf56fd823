import json
import os
import stat
import sys
from typing import Any

import h5py
import numpy
import pytest
import torch
from allennlp.commands import main
from allennlp.modules.elmo import Elmo as AllenNlpElmo
from allennlp.modules.elmo import batch_to_ids

from elmo_plugin.elmo import load_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.elmo_embedder import embed_file


def run_command(monkeypatch, *args):
    monkeypatch.setattr(sys, "argv", ["allennlp", "elmo-embed", *args])
    main()


def test_command_writes_bilm_tf_layout_equal_to_allennlp(
    monkeypatch,
    tmp_path,
    sentences_file,
    elmo_files_arguments,
    elmo_options,
    elmo_weights,
    sentences,
):
    text = sentences_file(sentences[:5])
    output = tmp_path / "out.hdf5"
    run_command(monkeypatch, str(text), str(output), *elmo_files_arguments, "--batch-size", "2")
    reference = AllenNlpElmo(elmo_options, elmo_weights, 1, dropout=0.0).eval()
    # Its private biLM (`_ElmoBiLm`), assigned in `__init__` without a type mypy can infer.
    reference_bilm: Any = reference._elmo_lstm  # type: ignore[has-type]
    with h5py.File(output, "r") as written:
        index = json.loads(written["sentence_to_index"][0])
        assert len(index) == 5
        for number, sentence in enumerate(sentences[:5]):
            layers = written[str(number)][...]
            assert layers.shape == (3, len(sentence), 32)
            assert index[" ".join(sentence)] == str(number)
            reference_bilm._elmo_lstm.reset_states()
            with torch.no_grad():
                expected = reference_bilm(batch_to_ids([sentence]))["activations"]
            for layer, theirs in zip(layers, expected):
                numpy.testing.assert_allclose(layer, theirs[0, 1:-1].numpy(), atol=1e-5)


@pytest.mark.gpu
def test_the_command_on_a_cuda_device_writes_the_cpus_layers(
    monkeypatch, tmp_path, sentences_file, elmo_files_arguments, sentences
):
    text = sentences_file(sentences)
    outputs = {device: tmp_path / f"{device}.hdf5" for device in ("-1", "0")}
    for device, output in outputs.items():
        run_command(
            monkeypatch, str(text), str(output), *elmo_files_arguments, "--cuda-device", device
        )
    with h5py.File(outputs["-1"], "r") as on_cpu, h5py.File(outputs["0"], "r") as on_gpu:
        assert on_gpu["sentence_to_index"][0] == on_cpu["sentence_to_index"][0]
        for number in range(len(sentences)):
            numpy.testing.assert_allclose(
                on_gpu[str(number)][...], on_cpu[str(number)][...], atol=1e-5
            )


@pytest.mark.parametrize("output_format,shape", [("top", (4, 32)), ("average", (4, 32))])
def test_top_and_average(tmp_path, elmo_options, elmo_weights, output_format, shape):
    text = tmp_path / "in.txt"
    text.write_text("a b c d\n")
    bilm = load_bilm(elmo_options, elmo_weights)
    embed_file(bilm, str(text), str(tmp_path / "all.hdf5"), "all")
    embed_file(bilm, str(text), str(tmp_path / "one.hdf5"), output_format)
    with h5py.File(tmp_path / "all.hdf5") as every, h5py.File(tmp_path / "one.hdf5") as one:
        assert one["0"].shape == shape
        expected = every["0"][...][-1] if output_format == "top" else every["0"][...].mean(0)
        numpy.testing.assert_allclose(one["0"][...], expected, atol=1e-6)


def test_empty_lines_give_empty_datasets_and_keep_numbering(tmp_path, elmo_options, elmo_weights):
    text = tmp_path / "in.txt"
    text.write_text("first line\n\n   \nlast one here\n")
    count = embed_file(load_bilm(elmo_options, elmo_weights), str(text), str(tmp_path / "o.hdf5"))
    assert count == 4
    with h5py.File(tmp_path / "o.hdf5") as written:
        assert [written[str(i)].shape[1] for i in range(4)] == [2, 0, 0, 3]


def test_non_utf8_input_names_the_line(tmp_path, elmo_options, elmo_weights):
    text = tmp_path / "in.txt"
    text.write_bytes(b"fine line\nbad \xff\xfe bytes\n")
    with pytest.raises(ConfigurationError, match=r"in.txt, line 2: not UTF-8"):
        embed_file(load_bilm(elmo_options, elmo_weights), str(text), str(tmp_path / "o.hdf5"))


def test_a_failure_half_way_leaves_the_previous_output_intact(tmp_path, elmo_options, elmo_weights):
    text = tmp_path / "in.txt"
    output = tmp_path / "o.hdf5"
    bilm = load_bilm(elmo_options, elmo_weights)
    text.write_text("a good line\n")
    embed_file(bilm, str(text), str(output))
    previous = output.read_bytes()
    text.write_bytes(b"a good line\n" * 5 + b"bad \xff\n")
    with pytest.raises(ConfigurationError, match="line 6"):
        embed_file(bilm, str(text), str(output), batch_size=2)
    assert output.read_bytes() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "o.hdf5"]


def test_output_equal_to_the_input_is_refused_also_through_a_symlink(
    tmp_path, elmo_options, elmo_weights
):
    text = tmp_path / "same.txt"
    text.write_text("a b c\n")
    link = tmp_path / "link.txt"
    link.symlink_to(text)
    bilm = load_bilm(elmo_options, elmo_weights)
    for output in (text, link, tmp_path / "." / "same.txt"):
        with pytest.raises(ConfigurationError, match="is the input"):
            embed_file(bilm, str(text), str(output))
    assert text.read_text() == "a b c\n"


def test_a_batch_of_only_blank_lines(tmp_path, elmo_options, elmo_weights):
    text = tmp_path / "in.txt"
    text.write_text("a b\n" * 3 + "\n" * 4 + "c\n" + "\n")
    count = embed_file(
        load_bilm(elmo_options, elmo_weights), str(text), str(tmp_path / "o.hdf5"), batch_size=3
    )
    assert count == 9
    with h5py.File(tmp_path / "o.hdf5") as written:
        assert [written[str(i)].shape for i in range(9)] == (
            [(3, 2, 32)] * 3 + [(3, 0, 32)] * 4 + [(3, 1, 32), (3, 0, 32)]
        )


def test_help_states_each_default_once(monkeypatch, capsys):
    with pytest.raises(SystemExit):
        run_command(monkeypatch, "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "(default = all)" in text and "(default: all)" not in text


def test_progress_lines_give_rank_sentences_tokens_rates_and_time_left(
    tmp_path, elmo_options, caplog
):
    (tmp_path / "in.txt").write_text("a b\nc\nd e f\n")
    with caplog.at_level("INFO", logger="elmo_plugin.embedding.progress"):
        embed_file(
            load_bilm(elmo_options, None),
            str(tmp_path / "in.txt"),
            str(tmp_path / "out.hdf5"),
            batch_size=2,
        )
    last = [r.getMessage() for r in caplog.records if r.name.endswith("progress")][-1]
    assert last.startswith("rank 0/1: 3/3 sentences (100%), 6/6 tokens; ")
    assert "sentences/s" in last and "tokens/s" in last and " done in 0:00:" in last


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_the_output_gets_the_mode_a_plain_open_would_give(
    tmp_path, elmo_options, elmo_weights, umask
):
    text = tmp_path / "in.txt"
    text.write_text("a b c\n")
    previous = os.umask(umask)
    try:
        embed_file(load_bilm(elmo_options, elmo_weights), str(text), str(tmp_path / "o.hdf5"))
        (tmp_path / "plain").write_text("")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "o.hdf5").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == 0o666 & ~umask


def test_compute_dtype_bfloat16_writes_float32_layers_close_to_float32(
    monkeypatch, tmp_path, sentences_file, elmo_files_arguments, sentences
):
    text = sentences_file(sentences[:6])
    written = {}
    for name in ("float32", "bfloat16"):
        output = tmp_path / f"{name}.hdf5"
        arguments = [str(text), str(output), *elmo_files_arguments, "--compute-dtype", name]
        run_command(monkeypatch, *arguments)
        with h5py.File(output, "r") as handle:
            written[name] = [handle[str(i)][...] for i in range(6)]
    for exact, reduced in zip(written["float32"], written["bfloat16"]):
        assert reduced.dtype == numpy.float32
        for a, b in zip(exact, reduced):  # each layer
            assert numpy.abs(a - b).max() / numpy.abs(a).max() < 2e-2
    assert any(not numpy.array_equal(a, b) for a, b in zip(written["float32"], written["bfloat16"]))


def _pipe_with(data: bytes) -> str:
    """A pipe holding `data` with its writing end closed, as `/dev/fd/N` (what `<(...)` and
    `/dev/stdin` give the command)."""
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    return f"/dev/fd/{read_end}"


def test_a_pipe_is_read_once(tmp_path, elmo_options, elmo_weights):
    pipe = _pipe_with(b"a b\nc\nd e f\n")
    count = embed_file(
        load_bilm(elmo_options, elmo_weights), pipe, str(tmp_path / "o.hdf5"), batch_size=2
    )
    assert count == 3
    with h5py.File(tmp_path / "o.hdf5") as written:
        assert [written[str(i)].shape[1] for i in range(3)] == [2, 1, 3]


def test_the_command_reads_dev_stdin(monkeypatch, tmp_path, elmo_files_arguments):
    pipe = _pipe_with(b"a b\nc\n")
    monkeypatch.setattr(sys, "stdin", open(pipe))  # not read by the command: it opens the path
    run_command(monkeypatch, pipe, str(tmp_path / "o.hdf5"), *elmo_files_arguments)
    with h5py.File(tmp_path / "o.hdf5") as written:
        assert sorted(written) == ["0", "1", "sentence_to_index"]


@pytest.mark.parametrize("named", ["--weight-file", "--options-file", "--archive"])
def test_the_output_may_not_be_any_input_of_the_command(
    monkeypatch, tmp_path, elmo_options, elmo_weights, named
):
    import shutil

    options, weights = tmp_path / "options.json", tmp_path / "weights.hdf5"
    shutil.copy(elmo_options, options)
    shutil.copy(elmo_weights, weights)
    archive = tmp_path / "model.tar.gz"
    archive.write_bytes(b"not read: refused first")
    (tmp_path / "in.txt").write_text("a b\n")
    target = {"--weight-file": weights, "--options-file": options, "--archive": archive}[named]
    (tmp_path / "link").symlink_to(target)
    before = target.read_bytes()
    model = (
        ["--archive", str(archive)]
        if named == "--archive"
        else ["--options-file", str(options), "--weight-file", str(weights)]
    )
    for output in (target, tmp_path / "link"):
        with pytest.raises(ConfigurationError, match=f"is the {named} "):
            run_command(monkeypatch, str(tmp_path / "in.txt"), str(output), *model)
    assert target.read_bytes() == before


@pytest.mark.parametrize("batch_size", ["0", "-3"])
def test_a_batch_size_below_one_is_a_clear_error(
    monkeypatch, tmp_path, elmo_files_arguments, batch_size
):
    (tmp_path / "in.txt").write_text("a b\n")
    files = [str(tmp_path / "in.txt"), str(tmp_path / "o.hdf5")]
    with pytest.raises(
        ConfigurationError, match=f"--batch-size must be a positive integer, got {batch_size}"
    ):
        run_command(monkeypatch, *files, *elmo_files_arguments, "--batch-size", batch_size)
    assert not (tmp_path / "o.hdf5").exists()


def test_non_finite_vectors_from_finite_weights_are_an_error_naming_the_line(
    tmp_path, elmo_options, elmo_weights
):
    text = tmp_path / "in.txt"
    text.write_text("a b\nc d e\n")
    output = tmp_path / "o.hdf5"
    output.write_bytes(b"previous")
    bilm = load_bilm(elmo_options, elmo_weights)
    with torch.no_grad():
        bilm.character_encoder.projection.weight.mul_(1e38)  # finite, but overflows float32
    assert all(torch.isfinite(p).all() for p in bilm.parameters())
    with pytest.raises(ConfigurationError, match=r"in.txt, line 2: the biLM gave .*non-finite"):
        embed_file(bilm, str(text), str(output))
    assert output.read_bytes() == b"previous"


def test_a_cr_only_file_is_one_sentence_a_line(tmp_path, elmo_options, elmo_weights):
    text = tmp_path / "in.txt"
    text.write_bytes(b"a b\rc\rd e f\r")
    count = embed_file(load_bilm(elmo_options, elmo_weights), str(text), str(tmp_path / "o.hdf5"))
    assert count == 3


def test_a_disk_filling_up_stops_before_hdf5_writes_on_it(
    monkeypatch, tmp_path, elmo_options, elmo_weights
):
    import collections
    import errno

    from elmo_plugin.elmo.files import atomic_files

    usage = collections.namedtuple("usage", "total used free")
    text = tmp_path / "in.txt"
    text.write_text("a b c\n" * 10)
    output = tmp_path / "o.hdf5"
    output.write_bytes(b"previous")
    free = iter([10**9, 10**9, 2**20 + 100])  # the third batch finds the disk nearly full
    monkeypatch.setattr(atomic_files.shutil, "disk_usage", lambda path: usage(10**9, 0, next(free)))
    with pytest.raises(
        OSError, match=f"no space left on the disk holding {tmp_path}/.elmo-embed-.*part-0.bin"
    ) as caught:
        embed_file(load_bilm(elmo_options, elmo_weights), str(text), str(output), batch_size=4)
    assert caught.value.errno == errno.ENOSPC
    assert output.read_bytes() == b"previous"
    # Beside them only the journal of the batches done, from which a rerun resumes.
    assert sorted(p.name for p in tmp_path.iterdir() if ".elmo-embed-" not in p.name) == [
        "in.txt",
        "o.hdf5",
    ]


def test_an_empty_input_warns_that_nothing_was_embedded(tmp_path, elmo_options, caplog):
    count = embed_file(load_bilm(elmo_options, None), _pipe_with(b""), str(tmp_path / "o.hdf5"))
    assert count == 0
    assert "no lines: the output holds no sentences" in caplog.text


def test_the_output_may_not_be_a_file_of_an_archive_directory(monkeypatch, tmp_path):
    run = tmp_path / "run"
    (run / "vocabulary").mkdir(parents=True)
    for name in ("config.json", "best.th", "vocabulary/tokens.txt"):
        (run / name).write_text("read by the loader")
    (tmp_path / "in.txt").write_text("a b\n")
    for name in ("best.th", "vocabulary/tokens.txt"):
        with pytest.raises(ConfigurationError, match="is the --archive file"):
            run_command(
                monkeypatch, str(tmp_path / "in.txt"), str(run / name), "--archive", str(run)
            )
        assert (run / name).read_text() == "read by the loader"
