"""The paper's tables in miniature: each table's runs, trained by a Runner, as markdown."""

import os
import statistics
from typing import Callable, List, Optional, Sequence, Tuple

from elmo_plugin.elmo.bilm.layer_names import GAMMA

from experiments import plot_layer_weights
from experiments.allennlp_runs import Result, Run, Runner
from experiments.markdown import Table
from experiments.planning import DEFAULT_LAMBDA, Plan
from experiments.scores import (
    dev_and_test,
    dev_score,
    headline_increase,
    headline_spread,
    increase,
    seed_mean,
    test_score,
)
from experiments.tasks import TASKS, task_names, task_of

PAPER_TABLES = ["table1", "table2", "table3", "sample_efficiency", "figure2"]
TABLES = PAPER_TABLES + ["convergence", "bfloat16", "finetuned"]
DEFAULT_TASKS = {
    "table1": list(TASKS),
    "table2": ["ner", "snli"],
    "table3": ["snli"],
    "figure2": list(TASKS),
    "convergence": list(TASKS),
    "bfloat16": ["ner"],
    "finetuned": [name for name, task in TASKS.items() if task.finetuned_elmo is not None],
    "sample_efficiency": [name for name, task in TASKS.items() if task.sample_format is not None],
}
# A fine-tuned biLM has no activation cache: it runs forward and backward every epoch, which
# ELMo in bfloat16 makes affordable (about 3x float32's speed on a CPU with AVX512_BF16).
FINETUNED_DTYPE = "bfloat16"


class PaperTables:
    """Builds each table's runs with `plan`, trains them with `runner`, and renders them.
    `tasks` (None: each table's own) chooses the tasks of table1, table2, table3 and figure2;
    figure2 draws its chart into `figure` (None: no chart). With `complete_rows_only`, a row
    with a run that has no result is left out."""

    def __init__(
        self,
        plan: Plan,
        runner: Runner,
        tasks: Optional[Sequence[str]],
        fractions: Sequence[float],
        figure: Optional[str],
        complete_rows_only: bool = False,
    ) -> None:
        self.plan, self.runner, self.chosen_tasks = plan, runner, tasks
        self.fractions, self.figure = sorted(fractions), figure
        self.complete_rows_only = complete_rows_only

    def shown(self, *cells: Result) -> bool:
        """Whether a row of these cells is shown: always, or with `complete_rows_only` (the
        docs, rendered from the records) only when every run behind them has a result."""
        return not self.complete_rows_only or all(cell.ok for cell in cells)

    def tasks(self, table: str) -> List[str]:
        chosen = DEFAULT_TASKS[table] if self.chosen_tasks is None else self.chosen_tasks
        if table == "table3":  # only tasks with ELMo at the output
            chosen = [name for name in chosen if "elmo_output" in TASKS[name].configs]
        if table == "table2":  # only tasks with a variant with ELMo at the input only
            chosen = [name for name in chosen if TASKS[name].input_elmo is not None]
        if table == "finetuned":
            chosen = [name for name in chosen if TASKS[name].finetuned_elmo is not None]
        if table == "sample_efficiency":
            chosen = [name for name in chosen if TASKS[name].sample_format is not None]
        return task_names(list(chosen))

    def cell_results(self, cells: List[List[Run]]) -> Tuple[List[Result], List[Result]]:
        """Trains every run of `cells` (a cell: the same settings at each seed of the job) and
        returns each cell's result (the mean over its seeds) and every run's own result."""
        results = self.runner.results_of(run for cell in cells for run in cell)
        return [seed_mean([results[run.name] for run in cell]) for cell in cells], list(
            results.values()
        )

    def elmo_variants(self, name: str) -> List[Tuple[str, str]]:
        """The task's +ELMo variants with ELMo's compute dtype: its `table1_elmo` (the paper's
        frozen biLM) in float32, then its `finetuned_elmo` if it has one."""
        task = TASKS[name]
        variants = [(task.table1_elmo, "float32")]
        if task.finetuned_elmo is not None:
            variants.append((task.finetuned_elmo, FINETUNED_DTYPE))
        return variants

    def table1(self) -> Tuple[Table, List[Result]]:
        names = self.tasks("table1")
        return self.against_baselines(
            [(name, TASKS[name].table1_elmo, "float32") for name in names]
        )

    def finetuned(self) -> Tuple[Table, List[Result]]:
        """Not the paper's, which keeps the biLM frozen: table 1's row of each task with a
        fine-tuned variant, then that variant's row against the same baseline runs."""
        names = self.tasks("finetuned")
        return self.against_baselines(
            [(name, *variant) for name in names for variant in self.elmo_variants(name)]
        )

    def against_baselines(self, variants: List[Tuple[str, str, str]]) -> Tuple[Table, List[Result]]:
        """A row per (task, +ELMo variant, compute dtype) against the task's baseline runs."""
        names = list(dict.fromkeys(name for name, _, _ in variants))
        baseline_cells = [self.plan.runs(name, "baseline") for name in names]
        elmo_cells = [
            self.plan.runs(name, variant, compute_dtype=dtype) for name, variant, dtype in variants
        ]
        cell_results, results = self.cell_results(baseline_cells + elmo_cells)
        baselines = dict(zip(names, zip(baseline_cells, cell_results)))
        rows = []
        for (name, variant, dtype), elmo_runs, with_elmo in zip(
            variants, elmo_cells, cell_results[len(names) :]
        ):
            task = TASKS[name]
            baseline_runs, base = baselines[name]
            if not self.shown(base, with_elmo):
                continue
            at_each_seed = self.increases_at_each_seed(baseline_runs, elmo_runs)
            rows.append(
                [
                    task.title,
                    f"test {task.metric_name}",
                    test_score(base),
                    test_score(with_elmo),
                    increase(base, with_elmo),
                ]
                + ([at_each_seed] if self.plan.extra_seeds else [])
                + [
                    f"{dev_score(base)} / {dev_score(with_elmo)}",
                    variant_text(variant, dtype),
                    self.budget_text(task.name),
                ]
            )
        header = (
            [
                "task",
                "metric",
                "baseline",
                "+ELMo",
                "increase (absolute / relative error reduction)",
            ]
            + (["increase at each seed"] if self.plan.extra_seeds else [])
            + ["best dev: baseline / +ELMo", "ELMo variant", "budget"]
        )
        return Table(header, rows), results

    def table2(self) -> Tuple[Table, List[Result]]:
        def cells(name: str) -> List[List[Run]]:
            variant = TASKS[name].input_elmo
            assert variant is not None  # self.tasks("table2") keeps the tasks that have one
            return [
                self.plan.runs(name, "baseline"),
                self.plan.runs(name, variant, top_layer_only=True),
                self.plan.runs(name, variant, regularization=1.0),
                self.plan.runs(name, variant, regularization=DEFAULT_LAMBDA),
            ]

        return self.dev_and_test_table(
            "table2",
            cells,
            ["baseline", "last only", "all layers, λ=1", "all layers, λ=0.001"],
        )

    def table3(self) -> Tuple[Table, List[Result]]:
        variants = ["baseline", "elmo_input", "elmo_input_output", "elmo_output"]
        return self.dev_and_test_table(
            "table3",
            lambda name: [self.plan.runs(name, variant) for variant in variants],
            ["baseline", "input only", "input & output", "output only"],
        )

    def dev_and_test_table(
        self, table: str, cells_of: Callable[[str], List[List[Run]]], columns: List[str]
    ) -> Tuple[Table, List[Result]]:
        """A row per task, a column per cell: dev / test scores."""
        rows, all_results = [], []
        for name in self.tasks(table):
            cell_results, results = self.cell_results(cells_of(name))
            all_results += results
            if not self.shown(*cell_results):
                continue
            task = TASKS[name]
            rows.append(
                [task.title, f"dev / test {task.metric_name}"]
                + [dev_and_test(result) for result in cell_results]
                + [self.budget_text(name)]
            )
        return Table(["task", "metric"] + columns + ["budget"], rows), all_results

    def sample_efficiency(self) -> Tuple[Table, List[Result]]:
        cells = [
            (name, fraction, self.plan.runs(name, variant, fraction=fraction))
            for name in self.tasks("sample_efficiency")
            for fraction in self.fractions
            for variant in ("baseline", TASKS[name].table1_elmo)
        ]
        cell_results, results = self.cell_results([runs for _, _, runs in cells])
        rows = []
        for (name, fraction, baseline_runs), (_, _, elmo_runs), base, with_elmo in zip(
            cells[::2], cells[1::2], cell_results[::2], cell_results[1::2]
        ):
            if not self.shown(base, with_elmo):
                continue
            facts = self.runner.results[baseline_runs[0].name].facts
            rows.append(
                [
                    TASKS[name].title,
                    TASKS[name].metric_name,
                    f"{100 * fraction:g}%",
                    str(facts.get("training_sentences", "-")),
                    str(baseline_runs[0].fields["num_epochs"]),
                    test_score(base),
                    test_score(with_elmo),
                    increase(base, with_elmo),
                ]
                + (
                    [self.increases_at_each_seed(baseline_runs, elmo_runs)]
                    if self.plan.extra_seeds
                    else []
                )
            )
        header = [
            "task",
            "metric",
            "training sentences",
            "count",
            "epochs",
            "baseline test",
            "+ELMo test",
            "increase (absolute / relative error reduction)",
        ] + (["increase at each seed"] if self.plan.extra_seeds else [])
        return Table(header, rows), results

    def figure2(self) -> Tuple[Table, List[Result]]:
        runs = [self.plan.run(name, TASKS[name].table1_elmo) for name in self.tasks("figure2")]
        results = list(self.runner.results_of(runs).values())
        groups = [group for result in results if result.ok for group in layer_weight_groups(result)]
        if not groups:
            return Table([], [], "(no finished +ELMo run to draw)"), results
        if self.figure is not None:
            os.makedirs(os.path.dirname(os.path.abspath(self.figure)), exist_ok=True)
            title = f"{plot_layer_weights.TITLE} (best epoch)"
            plot_layer_weights.draw(groups, title, self.figure)
        layers = plot_layer_weights.layer_names(groups) + [GAMMA]
        rows = [
            [name] + [f"{mix.get(layer, float('nan')):.3f}" for layer in layers]
            for name, mix in groups
        ]
        if self.figure is None:
            return Table(["task"] + layers, rows), results
        image = os.path.relpath(os.path.abspath(self.figure), self.plan.output_dir)
        return Table(["task"] + layers, rows, f"![layer weights]({image})"), results

    def convergence(self) -> Tuple[Table, List[Result]]:
        """How far table 1's runs are from converged: each cell's dev score after every epoch
        (the mean over its seeds), its best epoch and what its last epoch added."""
        rows, all_results = [], []
        for name in self.tasks("convergence"):
            task = TASKS[name]
            variants = [("baseline", "float32")] + self.elmo_variants(name)
            cells = [
                self.plan.runs(name, variant, compute_dtype=dtype) for variant, dtype in variants
            ]
            all_results += self.cell_results(cells)[1]
            for (variant, dtype), cell in zip(variants, cells):
                results = [self.runner.results[run.name] for run in cell]
                if not self.shown(*results):
                    continue
                curve = mean_epoch_curve(results, task.epoch_curve_metric)
                rows.append(
                    [task.title, variant_text(variant, dtype), task.epoch_curve_metric]
                    + curve_summary(curve)
                    + [self.budget_text(name)]
                )
        header = ["task", "run", "metric", "after each epoch", "best epoch", "last epoch's change"]
        return Table(header + ["budget"], rows), all_results

    def bfloat16(self) -> Tuple[Table, List[Result]]:
        """Each task's table-1 +ELMo run with ELMo in float32 (the same runs as table1's)
        against ELMo in bfloat16, at the same seeds: what `compute_dtype` costs downstream."""
        rows, all_results = [], []
        for name in self.tasks("bfloat16"):
            task = TASKS[name]
            cells = [
                self.plan.runs(name, task.table1_elmo, compute_dtype=dtype)
                for dtype in ("float32", "bfloat16")
            ]
            (exact, reduced), results = self.cell_results(cells)
            all_results += results
            if not self.shown(exact, reduced):
                continue
            at_each_seed = self.increases_at_each_seed(*cells)
            rows.append(
                [
                    task.title,
                    f"test {task.metric_name}",
                    test_score(exact),
                    test_score(reduced),
                    headline_increase(exact, reduced),
                    at_each_seed,
                    headline_spread(exact),
                    f"{dev_score(exact)} / {dev_score(reduced)}",
                    task.table1_elmo,
                    self.budget_text(name),
                ]
            )
        header = [
            "task",
            "metric",
            "ELMo in float32",
            "ELMo in bfloat16",
            "difference",
            "difference at each seed",
            "float32's seed-to-seed std",
            "best dev: float32 / bfloat16",
            "ELMo variant",
            "budget",
        ]
        return Table(header, rows), all_results

    def increases_at_each_seed(self, first_runs: List[Run], second_runs: List[Run]) -> str:
        """The headline score of each second run minus its first run's, seed by seed."""
        return ", ".join(
            headline_increase(self.runner.results[first.name], self.runner.results[second.name])
            for first, second in zip(first_runs, second_runs)
        )

    def budget_text(self, task_name: str) -> str:
        return ", ".join(
            f"{knob} {value}"
            for knob, value in self.plan.budgets[task_name].items()
            if knob != "subsample_max_epochs"
        )


def variant_text(variant: str, compute_dtype: str) -> str:
    """A +ELMo variant, with ELMo's compute dtype unless float32."""
    return variant if compute_dtype == "float32" else f"{variant} ({compute_dtype})"


def epoch_curve(result: Result, key: str) -> List[float]:
    """`key` in percent after each epoch of a finished run (as its record keeps it)."""
    return [100 * value for value in result.epochs.get(key, [])] if result.ok else []


def mean_epoch_curve(results: Sequence[Result], key: str) -> List[float]:
    """The runs' curves averaged epoch by epoch, up to the last epoch every run reached (early
    stopping can end one seed before another)."""
    curves = [epoch_curve(result, key) for result in results]
    return [statistics.mean(values) for values in zip(*curves)]


def curve_summary(curve: List[float]) -> List[str]:
    """The curve, its best epoch (from 1) and its last epoch's change over the one before."""
    if not curve:
        return ["-", "-", "-"]
    best = max(range(len(curve)), key=curve.__getitem__)
    last_change = f"{curve[-1] - curve[-2]:+.2f}" if len(curve) > 1 else "-"
    return [
        ", ".join(f"{value:.1f}" for value in curve),
        f"{best + 1} of {len(curve)}",
        last_change,
    ]


def layer_weight_groups(result: Result) -> List[Tuple[str, plot_layer_weights.Mix]]:
    """The run's layer weights at its best epoch (the archived model), one group per mix,
    named by place when the model has ELMo at its input and output."""
    phases = ("best_validation", "training")  # SQuAD has no validation: its last epoch is kept
    mixes = plot_layer_weights.mixes_in_metrics(result.metrics, phases, result.run.name)
    task = task_of(result.run).name
    places = ["input", "output"] if len(mixes) == 2 else [""]
    return [
        (f"{task} {place}".strip(), mix) for place, (_, mix) in zip(places, sorted(mixes.items()))
    ]
