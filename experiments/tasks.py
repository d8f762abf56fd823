"""
The tasks of the paper's tables: their configs by variant, budget knobs with their defaults
and the metrics their tables show. Where a knob or an ELMo setting goes in a task's config is
task_knobs.jsonnet's knowledge: this module passes it the knobs and gets the overrides.
"""

import functools
import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import _jsonnet

from experiments.allennlp_runs import PROJECT_ROOT, Run

TASK_KNOBS = os.path.join(PROJECT_ROOT, "experiments", "task_knobs.jsonnet")
CONFIGS = os.path.join("elmo_plugin", "training_configs")


@dataclass(frozen=True)
class Task:
    """A task: `configs` by variant ("baseline", "elmo_input", ...), relative to
    elmo_plugin/training_configs/ without ".jsonnet"; `budget` its knobs with their defaults;
    `test_metrics` what its tables show, the headline last; `input_elmo` its variant with ELMo
    at the input only (None: it has none), `table1_elmo` its variant of table 1 and
    `finetuned_elmo` (if any) a variant with the biLM fine-tuned that the `finetuned` table
    shows beside table 1's."""

    name: str
    title: str
    configs: Dict[str, str]
    budget: Dict[str, Any]
    test_metrics: Tuple[str, ...]
    metric_name: str
    dev_metric: Optional[str]
    input_elmo: Optional[str]
    table1_elmo: str
    finetuned_elmo: Optional[str] = None

    def config_file(self, variant: str) -> str:
        """The variant's config, relative to the project root (where runs start)."""
        return os.path.join(CONFIGS, f"{self.configs[variant]}.jsonnet")

    def config_value(self, variant: str, key: str) -> Any:
        """A top-level field of the variant's config as jsonnet evaluates it."""
        return _evaluated(os.path.join(PROJECT_ROOT, self.config_file(variant)))[key]

    @property
    def epoch_curve_metric(self) -> str:
        """The metric an epoch's `metrics_epoch_*.json` holds for the convergence table: the dev
        metric, or for a task trained without validation its headline metric on train."""
        if self.dev_metric is not None:
            return self.dev_metric.replace("best_validation_", "validation_", 1)
        return self.test_metrics[-1].replace("test_", "training_", 1)

    def budget_overrides(self, budget: Dict[str, Any]) -> Dict[str, Any]:
        return self._knobs(budget=budget)

    def elmo_overrides(
        self,
        options_file: str,
        weight_file: str,
        regularization: float,
        top_layer_only: bool,
        num_layers: int,
        compute_dtype: str = "float32",
    ) -> Dict[str, Any]:
        """The biLM files, the regularizer's lambda, with `top_layer_only` fixed layer weights
        on the top one of the biLM's `num_layers` LSTM layers, and ELMo's `compute_dtype`."""
        return self._knobs(
            elmo=dict(
                options_file=options_file,
                weight_file=weight_file,
                regularization=regularization,
                top_layer_only=top_layer_only,
                num_layers=num_layers,
                compute_dtype=compute_dtype,
            )
        )

    def _knobs(self, **knobs: Any) -> Dict[str, Any]:
        codes = {key: json.dumps(value) for key, value in dict(task=self.name, **knobs).items()}
        return json.loads(_jsonnet.evaluate_file(TASK_KNOBS, tla_codes=codes))


@functools.lru_cache(maxsize=None)
def _evaluated(path: str) -> Dict[str, Any]:
    return json.loads(_jsonnet.evaluate_file(path))


# Epoch budgets: as close to convergence as a few sessions of these 2 cores allow for all the
# tables' runs (experiments/paper_tables.py convergence shows each dev curve). Earlier budgets
# (NER 3, SRL 5, SNLI 4, SQuAD 1) ended every run at its best epoch; the SRL baseline's dev F1
# went 38.8 after 5 epochs, 45.2 after 10 and 47.2 after 20 (seed 13370).
TASKS = {
    task.name: task
    for task in [
        Task(
            name="ner",
            title="CoNLL-2003 NER",
            configs={"baseline": "ner/ner_baseline", "elmo": "ner/ner_elmo"},
            # subsample_max_epochs: sample_efficiency trains a fraction f of the sentences
            # for epochs / f epochs (as many updates as the full set) up to this many.
            budget=dict(
                epochs=6,
                hidden_size=200,
                num_layers=2,
                word_dim=100,
                char_filters=64,
                batch_size=32,
                subsample_max_epochs=30,
            ),
            test_metrics=("test_f1-measure-overall",),
            metric_name="span F1",
            dev_metric="best_validation_f1-measure-overall",
            input_elmo="elmo",
            table1_elmo="elmo",
        ),
        Task(
            name="srl",
            title="SRL (UP English-EWT)",
            configs={
                "baseline": "srl/srl_baseline",
                "elmo": "srl/srl_elmo",
                "elmo_finetuned": "srl/srl_elmo_finetuned",
            },
            budget=dict(
                epochs=20,
                hidden_size=200,
                num_layers=2,
                word_dim=100,
                char_filters=64,
                predicate_dim=100,
                batch_size=32,
                label_mode="span",
            ),
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
            # The frozen biLM (the paper's) gains nothing on SRL here; fine-tuned it does.
            finetuned_elmo="elmo_finetuned",
        ),
        Task(
            name="snli",
            title="SNLI",
            configs={
                variant: f"snli/snli_{variant}"
                for variant in ["baseline", "elmo_input", "elmo_input_output", "elmo_output"]
            },
            budget=dict(
                epochs=8, hidden_size=100, word_dim=100, char_filters=64, batch_size=32, lr=0.001
            ),
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
            budget=dict(
                epochs=2,
                hidden_size=30,
                word_dim=50,
                char_filters=50,
                batch_size=32,
                passage_length_limit=200,
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
            configs={"baseline": "sentiment/sst_baseline", "elmo": "sentiment/sst_elmo"},
            budget=dict(epochs=10, batch_size=32),
            test_metrics=("test_accuracy",),
            metric_name="accuracy",
            dev_metric="best_validation_accuracy",
            # sst_elmo has ELMo at the input and the integrator's output, as the paper's SST-5
            input_elmo=None,
            table1_elmo="elmo",
        ),
    ]
}


def task_of(run: Run) -> Task:
    return TASKS[run.name.split("/")[0]]


def budgets_with(settings: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    """Each task's budget with the `task.knob=value` settings applied."""
    budgets = {name: dict(task.budget) for name, task in TASKS.items()}
    for setting in settings:
        key, _, value = setting.partition("=")
        task_name, _, knob = key.partition(".")
        if task_name not in budgets or knob not in budgets[task_name] or not value:
            raise SystemExit(f"--set {setting}: expected TASK.KNOB=VALUE, one of: {knob_list()}")
        budgets[task_name][knob] = type(TASKS[task_name].budget[knob])(value)
    return budgets


def knob_list() -> str:
    return "; ".join(
        f"{name}." + ", ".join(f"{knob}={value}" for knob, value in task.budget.items())
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
