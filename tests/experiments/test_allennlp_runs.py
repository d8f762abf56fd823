"""experiments/allennlp_runs.py: when a finished run is read back instead of trained again."""

import json
from pathlib import Path

import pytest

from experiments.allennlp_runs import RUN_RECORD, Run, finished


@pytest.fixture
def finished_run(tmp_path):
    """A run whose dir holds its metrics and a record of its settings and config digest."""
    config = tmp_path / "config.jsonnet"
    config.write_text('local size = 3; {"model": {"size": size}}')
    run = Run("task/run", str(config), {"trainer.num_epochs": 2}, str(tmp_path / "task" / "run"))
    Path(run.serialization_dir).mkdir(parents=True)
    (Path(run.serialization_dir) / "metrics.json").write_text('{"test_accuracy": 0.5}')
    record = {"settings": run.settings, "config_digest": run.config_digest(), "wall_clock_s": 60.0}
    (Path(run.serialization_dir) / RUN_RECORD).write_text(json.dumps(record))
    return run, config


def test_a_finished_run_is_read_back(finished_run):
    run, _ = finished_run
    result = finished(run)
    assert (
        result.cached and result.metrics == {"test_accuracy": 0.5} and result.wall_clock_s == 60.0
    )


def test_a_run_whose_config_text_changed_trains_again(finished_run):
    run, config = finished_run
    config.write_text('local size = 4; {"model": {"size": size}}')
    assert finished(run) is None


def test_a_run_with_other_overrides_trains_again(finished_run):
    run, _ = finished_run
    assert (
        finished(Run(run.name, run.config, {"trainer.num_epochs": 3}, run.serialization_dir))
        is None
    )


def test_a_record_from_before_digests_were_kept_is_read_back(finished_run):
    run, config = finished_run
    record_path = Path(run.serialization_dir) / RUN_RECORD
    record = json.loads(record_path.read_text())
    del record["config_digest"]
    record_path.write_text(json.dumps(record))
    config.write_text('{"model": {"size": 5}}')
    assert finished(run).metrics == {"test_accuracy": 0.5}
