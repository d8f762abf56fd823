"""
The tasks of the paper's tables: their configs by variant, their budget knobs (each a hidden
field of the task's config, read from it) with the values the tables train them at where those
differ from the config's own, and the metrics their tables show.

A run sets its settings as hidden fields of its task's config (experiments/allennlp_runs.py
writes the wrapper config it trains): the knobs of `Task.knobs`, and those every task config
has (its .libsonnet), which experiments/planning.py sets:

  num_epochs                   the epochs (knob `epochs`)
  elmo_settings                the biLM (`elmo_settings+:: {options_file, weight_file}`)
  elmo_regularization          lambda of the paper's lambda * ||w||^2 on the layer weights
  elmo_scalar_mix_parameters   fixed layer weights (the top layer only), null: learned
  elmo_compute_dtype           ELMo's compute dtype, null: float32

and, on a sample of the training sentences (sample_efficiency), the task's `sample_fields`
(NER's `patience` and `all_tags_in_vocabulary`). So a new task is a Task entry here and those
hidden fields in its config.
"""

import dataclasses
import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from experiments import configs
from experiments.allennlp_runs import CONFIGS, PROJECT_ROOT, Run


@dataclass(frozen=True)
class Task:
    """A task: `configs` by variant ("baseline", "elmo_input", ...), relative to
    training_configs/ without ".jsonnet"; `knobs` its budget knobs (`--set
    TASK.KNOB=VALUE`), each the hidden field of its configs it sets (None: a knob of the
    experiments alone), in the order the tables show them; `budget` the knobs' values for the
    tables where they are not the config's own (a knob of the experiments alone must have one
    here); `test_metrics` what its tables show, the headline last; `input_elmo` its variant with
    ELMo at the input only (None: it has none), `table1_elmo` its variant of table 1 and
    `finetuned_elmo` (if any) a variant with the biLM fine-tuned that the `finetuned` table
    shows beside table 1's. A task that sample_efficiency samples has a `sample_format`, how its
    training file holds sentences (experiments/samples.py's `FORMATS`), the hidden fields of a
    run on a sample in `sample_fields`, and a knob `subsample_max_epochs`."""

    name: str
    title: str
    configs: Dict[str, str]
    knobs: Dict[str, Optional[str]]
    budget: Dict[str, Any]
    test_metrics: Tuple[str, ...]
    metric_name: str
    dev_metric: Optional[str]
    input_elmo: Optional[str]
    table1_elmo: str
    finetuned_elmo: Optional[str] = None
    sample_format: Optional[str] = None
    sample_fields: Dict[str, Any] = dataclasses.field(default_factory=dict)

    def config_file(self, variant: str) -> str:
        """The variant's config, relative to the project root (where runs start)."""
        return os.path.join(CONFIGS, f"{self.configs[variant]}.jsonnet")

    def config_value(self, variant: str, key: str) -> Any:
        """A top-level field of the variant's config as jsonnet evaluates it."""
        return configs.evaluate(os.path.join(PROJECT_ROOT, self.config_file(variant)))[key]

    def default_budget(self) -> Dict[str, Any]:
        """Each knob's value for the tables: the budget's, else the config's own (its hidden
        field in the baseline's config, as jsonnet evaluates it)."""
        budget = {}
        for knob, field in self.knobs.items():
            if knob in self.budget or field is None:
                budget[knob] = self.budget[knob]
            else:
                budget[knob] = self.hidden_fields()[field]
        return budget

    def hidden_fields(self) -> Dict[str, Any]:
        """The values of the knobs' hidden fields in the baseline's config."""
        fields = [field for field in self.knobs.values() if field is not None]
        return _hidden_fields(os.path.join(PROJECT_ROOT, self.config_file("baseline")), *fields)

    @property
    def epoch_curve_metric(self) -> str:
        """The metric an epoch's `metrics_epoch_*.json` holds for the convergence table: the dev
        metric, or for a task trained without validation its headline metric on train."""
        if self.dev_metric is not None:
            return self.dev_metric.replace("best_validation_", "validation_", 1)
        return self.test_metrics[-1].replace("test_", "training_", 1)

    def budget_fields(self, budget: Dict[str, Any]) -> Dict[str, Any]:
        """The hidden fields that set a budget (the knobs of the experiments alone left out)."""
        return {field: budget[knob] for knob, field in self.knobs.items() if field is not None}


def _hidden_fields(path: str, *fields: str) -> Dict[str, Any]:
    snippet = (
        f"local config = import {json.dumps(path)};\n"
        + "{\n"
        + "".join(f"  {json.dumps(field)}: config[{json.dumps(field)}],\n" for field in fields)
        + "}\n"
    )
    try:
        return configs.evaluate(path + ".knobs.jsonnet", snippet, [path])
    except RuntimeError as error:
        raise SystemExit(
            f"{path}: a hidden field of its task's knobs ({', '.join(fields)}) is missing: "
            f"{str(error).splitlines()[0]}"
        ) from error


# The knobs every task has; their hidden fields are those of every task config.
EPOCHS = {"epochs": "num_epochs"}
# sample_efficiency trains a fraction f of the sentences for epochs / f epochs (as many updates
# as the full set) up to this many: a knob of the experiments alone.
SUBSAMPLE_MAX_EPOCHS = {"subsample_max_epochs": None}

# Epoch budgets: as close to convergence as a few sessions of these 2 cores allow for all the
# tables' runs (experiments/paper_tables.py convergence shows each dev curve). Earlier budgets
# (NER 3, SRL 5, SNLI 4, SQuAD 1) ended every run at its best epoch; the SRL baseline's dev F1
# went 38.8 after 5 epochs, 45.2 after 10 and 47.2 after 20 (seed 13370). Sizes: for 2 CPU
# cores, smaller than the configs' where those take too long.
TASKS = {
    task.name: task
    for task in [
        Task(
            name="ner",
            title="CoNLL-2003 NER",
            configs={"baseline": "ner/ner_baseline", "elmo": "ner/ner_elmo"},
            knobs={
                **EPOCHS,
                "hidden_size": "hidden_size",
                "num_layers": "num_layers",
                "word_dim": "word_dim",
                "char_filters": "char_filters",
                "batch_size": "batch_size",
                **SUBSAMPLE_MAX_EPOCHS,
            },
            budget=dict(epochs=6, subsample_max_epochs=30),
            test_metrics=("test_f1-measure-overall",),
            metric_name="span F1",
            dev_metric="best_validation_f1-measure-overall",
            input_elmo="elmo",
            table1_elmo="elmo",
            sample_format="conll",
            sample_fields={
                # No early stopping: on a few sentences dev F1 can stay 0 for several epochs.
                "patience": None,
                # The label vocabulary comes from train only, and a sample can miss tags dev has.
                "all_tags_in_vocabulary": True,
            },
        ),
        Task(
            name="srl",
            title="SRL (UP English-EWT)",
            configs={
                "baseline": "srl/srl_baseline",
                "elmo": "srl/srl_elmo",
                "elmo_finetuned": "srl/srl_elmo_finetuned",
            },
            knobs={
                **EPOCHS,
                "hidden_size": "hidden_size",
                "num_layers": "num_layers",
                "word_dim": "word_dim",
                "char_filters": "char_filters",
                "predicate_dim": "predicate_dim",
                "batch_size": "batch_size",
                "label_mode": "label_mode",
            },
            budget=dict(hidden_size=200, num_layers=2),
            test_metrics=(
                "test_precision-overall",
                "test_recall-overall",
                "test_f1-measure-overall",
            ),
            # arguments are spans or head words as the budget's label_mode says (its column)
            metric_name="argument P / R / F1 excl. V",
            dev_metric="best_validation_f1-measure-overall",
            input_elmo="elmo",
            table1_elmo="elmo",
            # The frozen biLM (the paper's) against the biLM fine-tuned with the task model.
            finetuned_elmo="elmo_finetuned",
        ),
        Task(
            name="snli",
            title="SNLI",
            configs={
                variant: f"snli/snli_{variant}"
                for variant in ["baseline", "elmo_input", "elmo_input_output", "elmo_output"]
            },
            knobs={
                **EPOCHS,
                "hidden_size": "hidden_dim",
                "word_dim": "word_dim",
                "char_filters": "char_filters",
                "batch_size": "batch_size",
                "lr": "lr",
            },
            budget=dict(epochs=8, hidden_size=100, lr=0.001),
            test_metrics=("test_accuracy",),
            metric_name="accuracy",
            dev_metric="best_validation_accuracy",
            input_elmo="elmo_input",
            table1_elmo="elmo_input_output",
        ),
        Task(
            name="squad",
            title="SQuAD v1.1",
            configs={
                "baseline": "squad/squad_baseline",
                "elmo_input": "squad/squad_elmo",
                "elmo_input_output": "squad/squad_elmo_input_output",
                "elmo_output": "squad/squad_elmo_output",
            },
            knobs={
                **EPOCHS,
                "hidden_size": "hidden_size",
                "word_dim": "word_dim",
                "char_filters": "char_filters",
                "batch_size": "batch_size",
                "passage_length_limit": "passage_length_limit",
            },
            budget=dict(
                epochs=2, hidden_size=30, word_dim=50, char_filters=50, passage_length_limit=200
            ),
            test_metrics=("test_em", "test_f1"),
            metric_name="EM / F1",
            dev_metric=None,  # trained without validation
            input_elmo="elmo_input",
            table1_elmo="elmo_input_output",
        ),
        Task(
            name="sst",
            title="SST-5 (BCN)",
            configs={
                "baseline": "sentiment/sst_baseline",
                "elmo": "sentiment/sst_elmo",
                "elmo_input_output": "sentiment/sst_elmo_input_output",
            },
            knobs={**EPOCHS, "batch_size": "batch_size", **SUBSAMPLE_MAX_EPOCHS},
            # On a sample too the config's patience (3 epochs) stops a run early.
            budget=dict(subsample_max_epochs=20),
            test_metrics=("test_accuracy",),
            metric_name="accuracy",
            dev_metric="best_validation_accuracy",
            # ELMo at the input only (AllenNLP's SST-5 setting): docs/sentiment.md has the
            # paper's input-and-output variant's runs
            input_elmo="elmo",
            table1_elmo="elmo",
            # A tree a line; sampled sentences train on their phrases as the full set does.
            sample_format="lines",
        ),
        Task(
            name="coref",
            title="Coreference (LitBank)",
            configs={"baseline": "coref/coref_baseline", "elmo": "coref/coref_elmo"},
            knobs={**EPOCHS, "hidden_size": "hidden_dim", "max_antecedents": "max_antecedents"},
            budget={},
            test_metrics=("test_muc_f1", "test_b3_f1", "test_ceafe_f1", "test_coref_f1"),
            metric_name="MUC / B3 / CEAF-e / average F1",
            dev_metric="best_validation_coref_f1",
            input_elmo="elmo",
            table1_elmo="elmo",
        ),
    ]
}


def task_of(run: Run) -> Task:
    return TASKS[run.name.split("/")[0]]


def budgets_with(settings: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    """Each task's budget with the `task.knob=value` settings applied."""
    budgets = {name: task.default_budget() for name, task in TASKS.items()}
    for setting in settings:
        key, _, value = setting.partition("=")
        task_name, _, knob = key.partition(".")
        if task_name not in budgets or knob not in budgets[task_name] or not value:
            raise SystemExit(f"--set {setting}: expected TASK.KNOB=VALUE, one of: {knob_list()}")
        budgets[task_name][knob] = type(budgets[task_name][knob])(value)
    return budgets


def knob_list() -> str:
    return "; ".join(
        f"{name}." + ", ".join(f"{knob}={value}" for knob, value in task.default_budget().items())
        for name, task in TASKS.items()
    )


def task_overrides(items: Sequence[str], option: str = "--overrides") -> Dict[str, Dict[str, Any]]:
    """`TASK=JSON` items (of the command-line `option`) as AllenNLP overrides per task."""
    overrides: Dict[str, Dict[str, Any]] = {name: {} for name in TASKS}
    for item in items:
        task_name, _, text = item.partition("=")
        if task_name not in TASKS:
            raise SystemExit(
                f"{option} {item}: expected TASK=JSON with TASK one of {sorted(TASKS)}"
            )
        overrides[task_name].update(json.loads(text))
    return overrides


def task_names(chosen: List[str]) -> List[str]:
    """`chosen` in the registry's order."""
    return [name for name in TASKS if name in chosen]
