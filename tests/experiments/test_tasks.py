"""experiments/tasks.py: a task's budget knobs are hidden fields of its configs, their defaults
read from the configs (not restated), and a run sets them in a wrapper config."""

import json

import pytest

from experiments import configs
from experiments.allennlp_runs import PROJECT_ROOT, Run
from experiments.tasks import TASKS, budgets_with

# The hidden fields every task config has (experiments/tasks.py's docstring).
COMMON_FIELDS = [
    "num_epochs",
    "elmo_settings",
    "elmo_regularization",
    "elmo_scalar_mix_parameters",
    "elmo_compute_dtype",
]


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_knob_is_a_hidden_field_of_each_config_of_its_task(name):
    task = TASKS[name]
    fields = [field for field in task.knobs.values() if field is not None] + COMMON_FIELDS
    for variant in task.configs:
        path = f"{PROJECT_ROOT}/{task.config_file(variant)}"
        checks = [
            f"std.objectHasAll(c, {name}) && !std.objectHas(c, {name})"
            for name in map(json.dumps, fields)
        ]
        snippet = f"local c = import {json.dumps(path)};\n[" + ", ".join(checks) + "]"
        hidden = configs.evaluate(path + ".test.jsonnet", snippet, [path])
        assert all(hidden), [field for field, ok in zip(fields, hidden) if not ok]


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_knob_not_in_the_budget_is_the_configs_own_value(name):
    task = TASKS[name]
    budget = task.default_budget()
    assert list(budget) == list(task.knobs)
    for knob, field in task.knobs.items():
        if knob in task.budget:
            assert budget[knob] == task.budget[knob]
        else:
            assert field is not None and budget[knob] == task.hidden_fields()[field]


def test_the_budget_restates_no_default_of_the_config():
    for task in TASKS.values():
        restated = [
            knob
            for knob, value in task.budget.items()
            if (field := task.knobs[knob]) is not None and task.hidden_fields()[field] == value
        ]
        assert not restated, f"{task.name}: {restated} are the config's own values"


def test_set_changes_a_knob_with_the_type_of_its_value():
    budgets = budgets_with(["ner.hidden_size=50", "snli.lr=0.01", "srl.label_mode=head"])
    assert budgets["ner"]["hidden_size"] == 50 and budgets["ner"]["epochs"] == 6
    assert budgets["snli"]["lr"] == 0.01 and budgets["srl"]["label_mode"] == "head"
    with pytest.raises(SystemExit, match="expected TASK.KNOB=VALUE"):
        budgets_with(["ner.dropout=0.1"])


def test_a_budget_set_as_hidden_fields_reaches_the_config_where_it_belongs(tmp_path):
    task = TASKS["snli"]
    fields = task.budget_fields(budgets_with(["snli.hidden_size=7", "snli.epochs=3"])["snli"])
    run = Run(
        "snli/x", task.config_file("baseline"), {}, str(tmp_path / "snli" / "x"), fields=fields
    )
    config = run.effective_config()
    model = config["model"]
    assert model["encoder"]["hidden_size"] == 7 and model["output_feedforward"]["hidden_dims"] == 7
    assert config["trainer"]["num_epochs"] == 3 and config["trainer"]["optimizer"]["lr"] == 0.001
