"""The `allennlp` command with the plugin (elmo_plugin/allennlp/command_checks.py): a CUDA device
that is not there is one error naming the flag or key, and `predict --silent` logs no INFO lines."""

import json
import logging
import sys

import pytest
import torch
from allennlp.commands import main

from elmo_plugin.allennlp.command_checks import quiet_when_silent
from elmo_plugin.elmo.errors import ConfigurationError
from tests.paths import FIXTURES
from tests.profile_archives import ARCHIVES, profile_of_this_process
from tests.tasks.ner.ner_small_overrides import SMALL

ARCHIVE = f"{ARCHIVES}/{profile_of_this_process()}/model.tar.gz"


@pytest.fixture
def _allennlp(monkeypatch, command_changes):
    """Runs the `allennlp` command in this process with what loading the plugin makes in it
    (`elmo_plugin.allennlp.command`), each change undone after the test."""

    def run(*args: str) -> None:
        monkeypatch.setattr(sys, "argv", ["allennlp", *args])
        command_changes()
        quiet_when_silent(sys.argv)
        main()

    return run


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


@pytest.fixture
def sentences(tmp_path) -> str:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"sentence": "John lives in Berlin ."}) + "\n")
    return str(path)


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_missing_cuda_device_names_the_flag(command, no_gpu, sentences, _allennlp):
    data = sentences if command == "predict" else str(FIXTURES / "ner" / "test.txt")
    with pytest.raises(ConfigurationError) as error:
        _allennlp(command, ARCHIVE, data, "--cuda-device", "0")
    message = str(error.value)
    assert message.startswith("--cuda-device 0: no CUDA device here")
    assert "to run on the CPU, leave --cuda-device out (or give -1) (a GPU needs" in message


@pytest.mark.parametrize(
    "command", [["elmo-perplexity", "export", "text.txt"], ["elmo-export", ARCHIVE, "out"]]
)
def test_our_commands_name_the_flag_of_a_missing_cuda_device(command, no_gpu, _allennlp):
    with pytest.raises(ConfigurationError) as error:
        _allennlp(*command, "--cuda-device", "1")
    assert str(error.value).startswith("--cuda-device 1: no CUDA device here")


def test_a_missing_trainer_cuda_device_names_the_key(no_gpu, tmp_path, _allennlp):
    overrides = json.dumps({**SMALL, "trainer.cuda_device": 0})
    config = "elmo_plugin://training_configs/ner/ner_baseline.jsonnet"
    with pytest.raises(ConfigurationError) as error:
        _allennlp("train", config, "-s", str(tmp_path / "run"), "-o", overrides)
    assert str(error.value).startswith("trainer.cuda_device 0: no CUDA device here")
    assert """set it to -1: -o '{"trainer.cuda_device": -1}'""" in str(error.value)
    assert not (tmp_path / "run").exists()


@pytest.fixture
def root_at_info():
    """The root logger at INFO, as the `allennlp` command sets it. `setLevel`, which clears the
    loggers' cached levels, not the attribute: else what ran before decides what is logged."""
    root = logging.getLogger()
    previous = root.level
    root.setLevel(logging.INFO)
    yield
    root.setLevel(previous)


def test_predict_silent_logs_no_info_lines(sentences, tmp_path, _allennlp, caplog, root_at_info):
    output = tmp_path / "out.jsonl"
    _allennlp("predict", ARCHIVE, sentences, "--output-file", str(output), "--silent")
    assert json.loads(output.read_text())["tags"]
    # The plugin lines come before the arguments are parsed; the start-up hook quiets them
    # (tests/test_outside_the_clone.py runs the command), which this in-process call bypasses.
    assert [
        record.getMessage()
        for record in caplog.records
        if record.levelno < logging.WARNING and record.name != "allennlp.common.plugins"
    ] == []


def test_a_users_error_ends_the_command_in_one_line(capsys, monkeypatch):
    from elmo_plugin.allennlp.command_checks import one_line_errors

    # What loading the plugin in the command does (`framework.COMMAND`), from Python's own hook:
    # an earlier test may have loaded the plugin and had the hook replaced since.
    monkeypatch.setattr(sys, "excepthook", one_line_errors(sys.__excepthook__))
    monkeypatch.delenv("ALLENNLP_DEBUG", raising=False)
    error = ConfigurationError("elmo_plugin://published/x/weights.hdf5: cannot reach the host")
    sys.excepthook(ConfigurationError, error, None)
    assert capsys.readouterr().err == (
        "allennlp: error: elmo_plugin://published/x/weights.hdf5: cannot reach the host\n"
    )
    try:
        raise ValueError("a bug")
    except ValueError as bug:
        sys.excepthook(ValueError, bug, bug.__traceback__)
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("ALLENNLP_DEBUG", "1")
    try:
        raise error
    except ConfigurationError as raised:
        sys.excepthook(ConfigurationError, raised, raised.__traceback__)
    assert "Traceback" in capsys.readouterr().err
