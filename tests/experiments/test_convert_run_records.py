"""experiments/convert_run_records.py: run dirs of the earlier layout (run.json, metrics.json,
metrics_epoch_*.json) become records in their task's scores file, which read back as the runs
they were; a run whose config file changed since is reported stale, not converted."""

import hashlib
import json
from pathlib import Path

from allennlp.common import params
import pytest

from experiments import configs, convert_run_records, records
from experiments.allennlp_runs import Run, finished

NER = "training_configs/ner/ner_baseline.jsonnet"
OVERRIDES = {
    "train_data_path": "fixtures/ner/train.txt",
    "trainer.num_epochs": 2,
    "random_seed": 1,
}


def old_run_dir(directory: Path, config: str, overrides: dict, digest: str = "") -> None:
    """A run dir as the earlier layout kept it."""
    directory.mkdir(parents=True)
    text = params.evaluate_file(config, ext_vars=configs.DATA_VARIABLES)
    digest = digest or hashlib.sha256(text.encode()).hexdigest()
    record = {
        "settings": {"config": config, "overrides": overrides},
        "config_digest": digest,
        "wall_clock_s": 120.0,
        "threads": 1,
        "environment": "Python 3.12.1, torch 2.15.0, allennlp 2.10.1, x86_64",
    }
    (directory / "run.json").write_text(json.dumps(record))
    (directory / "metrics.json").write_text('{"test_f1-measure-overall": 0.8}')
    for epoch, f1 in enumerate([0.5, 0.6]):
        metrics = {"validation_f1-measure-overall": f1, "validation_loss": 1.0}
        (directory / f"metrics_epoch_{epoch}.json").write_text(json.dumps(metrics))


@pytest.fixture
def old_layout(tmp_path):
    old = tmp_path / "old"
    old_run_dir(old / "ner" / "baseline_seed1", NER, OVERRIDES)
    old_run_dir(old / "ner" / "stale", NER, OVERRIDES, digest="0" * 64)
    (old / "ner" / "unfinished").mkdir()
    return old


def test_run_dirs_become_records_that_read_back_as_the_runs(old_layout, tmp_path, capsys):
    records_dir = tmp_path / "records"
    assert convert_run_records.main([str(old_layout), "--records", str(records_dir)]) == 1
    out = capsys.readouterr().out
    assert "1 converted, 1 stale, 1 unfinished" in out
    assert "/ner/stale: training_configs/ner/ner_baseline.jsonnet changed" in out
    scores = json.loads((records_dir / "ner.json").read_text())
    assert sorted(scores["runs"]) == ["baseline_seed1"]
    record = scores["runs"]["baseline_seed1"]
    assert record["epochs"] == {"validation_f1-measure-overall": [0.5, 0.6]}
    assert record["facts"] == {"training_sentences": 21} and record["wall_clock_s"] == 120.0
    assert record["settings"]["overrides"] == OVERRIDES
    # The same settings as a run of today: read back, not trained.
    run = Run(
        "ner/baseline_seed1",
        NER,
        OVERRIDES,
        str(tmp_path / "runs" / "ner" / "baseline_seed1"),
        records=str(records_dir / "ner.json"),
    )
    result = finished(run)
    assert result is not None
    assert result.metrics == {"test_f1-measure-overall": 0.8} and result.wall_clock_s == 120.0


def test_converting_again_changes_nothing(old_layout, tmp_path, capsys):
    records_dir = tmp_path / "records"
    convert_run_records.main([str(old_layout), "--records", str(records_dir)])
    written = (records_dir / "ner.json").read_text()
    convert_run_records.main([str(old_layout), "--records", str(records_dir)])
    assert "1 recorded already, 1 stale, 1 unfinished" in capsys.readouterr().out
    assert (records_dir / "ner.json").read_text() == written


def test_a_record_of_another_config_is_not_replaced(old_layout, tmp_path, capsys):
    records_dir = tmp_path / "records"
    convert_run_records.main([str(old_layout), "--records", str(records_dir)])
    other = tmp_path / "other"
    old_run_dir(other / "ner" / "baseline_seed1", NER, {**OVERRIDES, "random_seed": 2})
    convert_run_records.main([str(other), "--records", str(records_dir)])
    out = capsys.readouterr().out
    assert ": recorded already with another config (not replaced)" in out and "1 kept" in out
    record = records.find(str(records_dir / "ner.json"), "baseline_seed1")
    assert record is not None
    assert record["config_changes"]["/random_seed"] == 1
