"""experiments/allennlp_runs.py and records.py: when a finished run is read back from its task's
scores file instead of trained again (its effective config is the recorded one), and why not."""

import json
from pathlib import Path
from typing import List

import pytest

from experiments import configs, records
from experiments.allennlp_runs import Result, Run, Runner, finished, look_up, record_of


def write_run_dir(run: Run, epochs: int = 2) -> None:
    """What `allennlp train` leaves in a run's dir: its config, final and per-epoch metrics."""
    directory = Path(run.serialization_dir)
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps(run.effective_config()))
    (directory / "metrics.json").write_text('{"test_accuracy": 0.5, "epoch": 1}')
    for epoch in range(epochs):
        (directory / f"metrics_epoch_{epoch}.json").write_text(
            json.dumps({"validation_accuracy": 0.1 * (epoch + 1), "other": 1.0})
        )


def recorded(run: Run) -> Result:
    """`finished(run)` of a run with a record, which these tests have written."""
    result = finished(run)
    assert result is not None, f"{run.name} has no record"
    return result


@pytest.fixture
def finished_run(tmp_path):
    """A run of a config with a hidden field, recorded as the Runner records a trained run."""
    config = tmp_path / "config.jsonnet"
    config.write_text('{ size:: 3, "model": {"size": $.size, "name": "m"}, "trainer": {} }')
    run = Run(
        "task/run",
        str(config),
        {"trainer.num_epochs": 2},
        str(tmp_path / "runs" / "task" / "run"),
        fields={"size": 4},
        records=str(tmp_path / "records" / "task.json"),
        epoch_metrics=("validation_accuracy",),
        facts={"training_sentences": 10},
    )
    write_run_dir(run)
    record, base = record_of(run, 60.0, 1, run.effective_config(), "Python 3")
    records.add(run.records_file, run.record_name, record, base)
    return run, config


def test_a_finished_run_is_read_back_from_its_record(finished_run):
    run, _ = finished_run
    result = recorded(run)
    assert result.cached and result.metrics == {"test_accuracy": 0.5, "epoch": 1}
    assert result.wall_clock_s == 60.0 and result.facts == {"training_sentences": 10}
    assert result.epochs == {"validation_accuracy": pytest.approx([0.1, 0.2])}
    # The record stands without the run's dir: the weights and logs are not needed again.
    for path in Path(run.serialization_dir).iterdir():
        path.unlink()
    assert recorded(run).metrics["test_accuracy"] == 0.5


def test_the_record_keeps_the_effective_config_as_the_config_files_and_the_runs_changes(
    finished_run,
):
    run, _ = finished_run
    scores = json.loads(Path(run.records_file).read_text())
    record = scores["runs"]["run"]
    assert scores["configs"][record["base_config"]] == {
        "model": {"size": 3, "name": "m"},
        "trainer": {},
    }
    assert record["config_changes"] == {"/model/size": 4, "/trainer/num_epochs": 2}
    assert records.effective_config(scores, record) == run.effective_config()
    assert record["settings"] == {
        "config": run.config,
        "fields": {"size": 4},
        "overrides": {"trainer.num_epochs": 2},
    }


def test_other_settings_with_the_same_effective_config_read_the_record_back(finished_run):
    """Identity is the config AllenNLP trains, not how the run names its settings: the hidden
    field as an override instead reads back the same record."""
    run, _ = finished_run
    same = Run(
        run.name,
        run.config,
        {"trainer.num_epochs": 2, "model.size": 4},
        run.serialization_dir,
        records=run.records_file,
    )
    assert recorded(same).metrics["test_accuracy"] == 0.5


def test_a_run_whose_config_changed_trains_again_naming_the_keys(finished_run):
    run, config = finished_run
    config.write_text('{ size:: 3, "model": {"size": $.size, "name": "n"}, "trainer": {} }')
    result, why = look_up(run)
    assert result is None and why is not None
    assert 'model.name: "m" -> "n"' in why and "task.json" in why


def test_a_run_with_other_overrides_trains_again_naming_the_keys(finished_run):
    run, _ = finished_run
    other = Run(
        run.name,
        run.config,
        {"trainer.num_epochs": 3},
        run.serialization_dir,
        fields=run.fields,
        records=run.records_file,
    )
    result, why = look_up(other)
    assert result is None and why is not None and why.endswith("(trainer.num_epochs: 2 -> 3)")
    lines: List[str] = []
    Runner(dry_run=True, report=lines.append).results_of([other])
    assert lines == [f"stale    task/run: {why}"]


def test_a_run_without_a_record_trains(finished_run, tmp_path):
    run, _ = finished_run
    other = Run("task/other", run.config, {}, str(tmp_path / "runs" / "task" / "other"))
    assert look_up(other) == (None, None)
    # Its record would go to the task's scores file beside its runs.
    assert other.records_file == str(tmp_path / "runs" / "task.json")


def test_a_damaged_record_is_an_error_naming_it(finished_run):
    run, _ = finished_run
    scores = json.loads(Path(run.records_file).read_text())
    scores["runs"]["run"]["config_changes"]["/model/size"] = 5
    Path(run.records_file).write_text(json.dumps(scores))
    with pytest.raises(ValueError, match="the record of run is damaged"):
        finished(run)


def test_records_of_one_task_share_its_file_and_its_configs(finished_run):
    run, _ = finished_run
    seed = Run(
        "task/run_seed1",
        run.config,
        {"trainer.num_epochs": 2, "random_seed": 1},
        run.serialization_dir + "_seed1",
        fields=run.fields,
        records=run.records_file,
    )
    write_run_dir(seed, epochs=1)
    record, base = record_of(seed, 30.0, 1, seed.effective_config(), "Python 3")
    records.add(seed.records_file, seed.record_name, record, base)
    scores = json.loads(Path(run.records_file).read_text())
    assert sorted(scores["runs"]) == ["run", "run_seed1"] and len(scores["configs"]) == 1
    assert recorded(run).wall_clock_s == 60.0 and recorded(seed).wall_clock_s == 30.0
    assert not list(Path(run.records_file).parent.glob("*.partial"))


def test_the_wrapper_sets_the_hidden_fields_and_the_command_trains_it(finished_run):
    run, _ = finished_run
    text = run.wrapper_text()
    assert f'(import "{run.config}") + {{' in text and "  size:: 4," in text
    assert configs.evaluate(run.wrapper_path, text)["model"]["size"] == 4
    command = run.command()
    assert command[command.index("train") + 1] == run.wrapper_path
    assert json.loads(command[command.index("-o") + 1]) == {"trainer.num_epochs": 2}


def test_a_field_ending_in_plus_is_merged_into_the_configs():
    text = configs.wrapper_text("c.jsonnet", {"settings+": {"a": 1}, "size": 2})
    assert '  settings+:: {"a": 1},' in text and "  size:: 2," in text


def test_changes_and_applied_are_inverse():
    base = {"a": {"b": 1, "c": [1, 2], "d": {}}, "e": "x", "k.with.dots": {"f/g": 1}}
    config = {"a": {"b": 2, "c": [1], "d": {"new": None}}, "k.with.dots": {"f/g": 1, "h": 2}}
    changed, removed = configs.changes(base, config)
    assert configs.applied(base, changed, removed) == config
    assert removed == ["/a/d", "/e"] and changed["/k.with.dots/h"] == 2


def test_a_sample_is_named_by_its_file_wherever_it_was_written():
    one = {"train_data_path": "/old/clone/results/data/ner_train_1pct_seed1.txt"}
    other = {"train_data_path": "runs/paper_tables/data/ner_train_1pct_seed1.txt"}
    assert configs.identity(one) == configs.identity(other)
    assert configs.identity(one) != configs.identity(
        {"train_data_path": "runs/data/ner_train_1pct_seed2.txt"}
    )
    assert configs.identity({"train_data_path": "/a/train.txt"}) != configs.identity(
        {"train_data_path": "/b/train.txt"}
    )


def test_a_record_with_the_exact_resume_callback_reads_as_the_trainer_that_replaced_it():
    old = {"trainer": {"callbacks": [{"type": "exact_resume"}], "num_epochs": 3}}
    new = {"trainer": {"type": "exact_resume_gradient_descent", "num_epochs": 3}}
    assert configs.identity(old) == configs.identity(new)
    sparse = {
        "trainer": {"type": "sparse_gradient_descent", "callbacks": [{"type": "exact_resume"}]}
    }
    assert configs.identity(sparse) == configs.identity(
        {"trainer": {"type": "sparse_gradient_descent"}}
    )
    # Without the callback the old config trained without exact resume: not the same run.
    assert configs.identity({"trainer": {"num_epochs": 3}}) != configs.identity(new)
    kept = {"trainer": {"callbacks": [{"type": "exact_resume"}, {"type": "other"}]}}
    assert configs.comparable(kept)["trainer"]["callbacks"] == [{"type": "other"}]


def test_a_records_only_runner_neither_trains_nor_lists(finished_run, tmp_path, capsys):
    run, _ = finished_run
    other = Run("task/other", run.config, {}, str(tmp_path / "runs" / "task" / "other"))
    results = Runner(records_only=True, report=lambda line: None).results_of([run, other])
    assert results["task/run"].ok and results["task/other"].error == "no record"
    assert capsys.readouterr().out == "" and not Path(other.serialization_dir).exists()
    assert isinstance(results["task/run"], Result)
