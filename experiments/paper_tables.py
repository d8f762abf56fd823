"""
The ELMo paper's (Peters et al. 2018) results in miniature, every number from `allennlp train`
runs of the configs in elmo_plugin/training_configs/, each in a fresh process on `--threads` threads,
`--parallel` at a time, on the fixed splits of ../shared/data (its README, section 8):

  table1             NER, SRL, SNLI, SQuAD: baseline against +ELMo (ELMo at the input for
                     NER and SRL, at the input and output for SNLI and SQuAD, as in the paper)
  table2             NER and SNLI with ELMo at the input: the top biLM layer only against all
                     layers with lambda = 1 and lambda = 0.001 on the layer weights
  table3             SNLI (and SQuAD with --tasks): ELMo at the input only, at the input and
                     output, at the output only
  sample_efficiency  NER test F1 against the fraction of training sentences, with and without
                     ELMo
  figure2            the softmax-normalised layer weights learned by the +ELMo runs of table1,
                     as a PNG and a table
  all                all of these, in this order

Baseline and +ELMo runs of a task share the budget (epochs and sizes, `--set`) and the seed
(`--seed`: AllenNLP's random_seed, numpy_seed and pytorch_seed). A run shared by several tables
trains once. With `--extra-seeds S ...` every cell is trained again at each seed S (runs named
`<run>_seed<S>`) and shows the mean ± sample standard deviation over the seeds. Each table's
markdown goes to `<output-dir>/<table>.md` and to stdout: the table, the runs behind it (test
and dev scores, wall-clock, whether read from an earlier job) and the wall-clock the table took.
Finished runs are kept (a run's dir holds `metrics.json` and `run.json`) and not trained again
unless `--force`, so an interrupted job resumes when started again with the same options; a run
whose settings or config file changed trains again.

sample_efficiency trains on a seeded sample of a fraction f of the CoNLL-2003 training
sentences (written to `<output-dir>/data/`) for epochs / f epochs, as many updates as the full
set, up to `ner.subsample_max_epochs`, without early stopping. Run from the project root:

    python experiments/paper_tables.py all
    python experiments/paper_tables.py table1 --tasks ner srl --set ner.epochs=6
    python experiments/paper_tables.py table3 --tasks snli squad
    python experiments/paper_tables.py table3 --dry-run
    python experiments/paper_tables.py figure2 --figure docs/elmo_layer_weights.png

Budgets default to a few minutes a run on 2 CPU cores (see `--set` in --help); other data or
any other setting go through `--overrides TASK=JSON` (AllenNLP overrides; relative paths are
read from the project root, as the configs' own).
"""
import argparse
import json
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import _jsonnet

from elmo_plugin.elmo.layer_weight_names import GAMMA
from elmo_plugin.elmo.elmo import LAYER_WEIGHTS_REGEX

import plot_layer_weights
from allennlp_runs import PROJECT_ROOT, Result, Run, Runner, markdown_table, minutes

TABLES = ["table1", "table2", "table3", "sample_efficiency", "figure2"]
EMBEDDERS = "model.text_field_embedder.token_embedders"
DEFAULT_LAMBDA = 0.001
SEED_KEYS, ALLENNLP_SEEDS = ("random_seed", "numpy_seed", "pytorch_seed"), (13370, 1337, 133)


@dataclass(frozen=True)
class Task:
    """A task's configs (by variant: "baseline", "elmo_input", ...), where its ELMo settings
    live, its budget knobs with their defaults, the metrics its tables show (test metrics with
    the headline last), and its variants with ELMo at the input only and as in table 1."""

    name: str
    title: str
    configs: Dict[str, str]
    elmo_field: str
    budget: Dict[str, Any]
    budget_overrides: Callable[[Dict[str, Any], str], Dict[str, Any]]
    test_metrics: Tuple[str, ...]
    metric_name: str
    dev_metric: Optional[str]
    input_elmo: str
    table1_elmo: str


def embedding_overrides(budget: Dict[str, Any]) -> Dict[str, Any]:
    return {
        f"{EMBEDDERS}.tokens.embedding_dim": budget["word_dim"],
        f"{EMBEDDERS}.token_characters.encoder.num_filters": budget["char_filters"],
        "trainer.num_epochs": budget["epochs"],
        "data_loader.batch_sampler.batch_size": budget["batch_size"],
    }


def ner_overrides(budget: Dict[str, Any], variant: str) -> Dict[str, Any]:
    return {
        **embedding_overrides(budget),
        "model.encoder.hidden_size": budget["hidden_size"],
        "model.encoder.num_layers": budget["num_layers"],
    }


def srl_overrides(budget: Dict[str, Any], variant: str) -> Dict[str, Any]:
    return {
        **ner_overrides(budget, variant),
        "model.predicate_embedding_dim": budget["predicate_dim"],
        "dataset_reader.label_mode": budget["label_mode"],
        "model.label_mode": budget["label_mode"],
    }


def snli_overrides(budget: Dict[str, Any], variant: str) -> Dict[str, Any]:
    hidden = budget["hidden_size"]
    sized = ["encoder.hidden_size", "projection_feedforward.hidden_dims",
             "inference_encoder.hidden_size", "output_feedforward.hidden_dims"]
    return {
        **embedding_overrides(budget),
        **{f"model.{key}": hidden for key in sized},
        "trainer.optimizer.lr": budget["lr"],
    }


def squad_overrides(budget: Dict[str, Any], variant: str) -> Dict[str, Any]:
    layers = ("phrase_layer", "modeling_layer", "span_end_encoder")
    return {
        **embedding_overrides(budget),
        **{f"model.{layer}.hidden_size": budget["hidden_size"] for layer in layers},
        "dataset_reader.passage_length_limit": budget["passage_length_limit"],
    }


TASKS = {
    task.name: task
    for task in [
        Task(
            "ner", "CoNLL-2003 NER", {"baseline": "ner/ner_baseline", "elmo": "ner/ner_elmo"},
            f"{EMBEDDERS}.elmo",
            # subsample_max_epochs: sample_efficiency trains a fraction f of the sentences
            # for epochs / f epochs (as many updates as the full set) up to this many.
            dict(epochs=3, hidden_size=200, num_layers=2, word_dim=100, char_filters=64,
                 batch_size=32, subsample_max_epochs=30),
            ner_overrides, ("test_f1-measure-overall",), "span F1",
            "best_validation_f1-measure-overall", "elmo", "elmo",
        ),
        Task(
            "srl", "SRL (UP English-EWT)", {"baseline": "srl/srl_baseline", "elmo": "srl/srl_elmo"},
            f"{EMBEDDERS}.elmo",
            dict(epochs=5, hidden_size=200, num_layers=2, word_dim=100, char_filters=64,
                 predicate_dim=100, batch_size=32, label_mode="span"),
            srl_overrides, ("test_precision-overall", "test_recall-overall", "test_f1-measure-overall"),
            "span P / R / F1 excl. V",
            "best_validation_f1-measure-overall", "elmo", "elmo",
        ),
        Task(
            "snli", "SNLI",
            {variant: f"snli/snli_{variant}" for variant in
             ["baseline", "elmo_input", "elmo_input_output", "elmo_output"]},
            "model.elmo",
            dict(epochs=4, hidden_size=100, word_dim=100, char_filters=64, batch_size=32, lr=0.001),
            snli_overrides, ("test_accuracy",), "accuracy", "best_validation_accuracy",
            "elmo_input", "elmo_input_output",
        ),
        Task(
            "squad", "SQuAD v1.1",
            {"baseline": "squad/squad_baseline", "elmo_input": "squad/squad_elmo",
             "elmo_input_output": "squad/squad_elmo_input_output", "elmo_output": "squad/squad_elmo_output"},
            "model.elmo",
            dict(epochs=1, hidden_size=30, word_dim=50, char_filters=50, batch_size=32,
                 passage_length_limit=200),
            squad_overrides, ("test_em", "test_f1"), "EM / F1", None, "elmo_input", "elmo_input_output",
        ),
    ]
}


@dataclass(frozen=True)
class Bilm:
    options_file: str
    weight_file: str
    num_layers: int
    output_dim: int

    @classmethod
    def read(cls, options_file: str, weight_file: str, dry_run: bool) -> "Bilm":
        options_file, weight_file = os.path.abspath(options_file), os.path.abspath(weight_file)
        if not os.path.isfile(options_file):
            if dry_run:  # the commands can be listed before the biLM is exported
                return cls(options_file, weight_file, 2, 0)
            raise SystemExit(f"{options_file}: no such biLM options file (see --bilm-options)")
        with open(options_file, encoding="utf-8") as handle:
            lstm = json.load(handle)["lstm"]
        return cls(options_file, weight_file, lstm["n_layers"], 2 * lstm["projection_dim"])

    def description(self) -> str:
        weight_file = os.path.relpath(self.weight_file, PROJECT_ROOT)
        return f"{weight_file} ({self.num_layers} LSTM layers, output dim {self.output_dim})"


class Plan:
    """Turns (task, variant, regularization, top layer only, training fraction) into runs,
    with the budgets, data, biLM and seed of this job."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.output_dir = os.path.abspath(args.output_dir)
        # AllenNLP's defaults unless --seed, so a run gets the seeds a plain `allennlp train` would.
        self.seeds = dict(zip(SEED_KEYS, [args.seed] * 3 if args.seed is not None else ALLENNLP_SEEDS))
        self.seed = self.seeds["random_seed"]
        self.extra_seeds = args.extra_seeds
        self.dry_run = args.dry_run
        self.bilm = Bilm.read(args.bilm_options, args.bilm_weights, args.dry_run)
        self.budgets = budgets_with(args.set)
        self.extra_overrides = task_overrides(args.overrides)

    def runs(self, task_name: str, variant: str, **settings: Any) -> List[Run]:
        """The run at this job's seeds, then one per `--extra-seeds`: a table cell's runs."""
        return [self.run(task_name, variant, **settings)] + [
            self.run(task_name, variant, seed=seed, **settings) for seed in self.extra_seeds
        ]

    def run(self, task_name: str, variant: str, regularization: float = DEFAULT_LAMBDA,
            top_layer_only: bool = False, fraction: float = 1.0, seed: Optional[int] = None) -> Run:
        """A run at this job's seeds, or with `seed` as its random, numpy and torch seed (and
        the sample's), named with a `_seed<seed>` suffix."""
        task = TASKS[task_name]
        seeds = self.seeds if seed is None else dict.fromkeys(SEED_KEYS, seed)
        name = variant
        overrides = task.budget_overrides(self.budgets[task_name], variant)
        overrides.update(self.extra_overrides[task_name])
        if variant != "baseline":
            overrides.update(self.elmo_overrides(task, regularization, top_layer_only))
            name += f"_lambda{regularization:g}" if regularization != DEFAULT_LAMBDA else ""
            name += "_top_layer" if top_layer_only else ""
        if fraction < 1.0:
            overrides.update(self.subsample_overrides(task, overrides, fraction, seeds["random_seed"]))
            name += f"_{100 * fraction:g}pct"
        name += "" if seed is None else f"_seed{seed}"
        overrides.update({"evaluate_on_test": True, **seeds})
        config = f"elmo_plugin/training_configs/{task.configs[variant]}.jsonnet"
        return Run(f"{task_name}/{name}", config, overrides, os.path.join(self.output_dir, task_name, name))

    def elmo_overrides(self, task: Task, regularization: float, top_layer_only: bool) -> Dict[str, Any]:
        overrides = {
            f"{task.elmo_field}.options_file": self.bilm.options_file,
            f"{task.elmo_field}.weight_file": self.bilm.weight_file,
            # The same penalty as elmo.libsonnet's regularizer(lambda).
            "model.regularizer": {
                "regexes": [[LAYER_WEIGHTS_REGEX, {"type": "l2", "alpha": regularization}]]
            },
        }
        if top_layer_only:
            # As elmo.libsonnet's top_layer_only(n): fixed weights, softmax (0, ..., 0, 1).
            weights = [-9e10] * self.bilm.num_layers + [1.0]
            overrides[f"{task.elmo_field}.scalar_mix_parameters"] = weights
        return overrides

    def subsample_overrides(self, task: Task, overrides: Dict[str, Any], fraction: float,
                            seed: int) -> Dict[str, Any]:
        """A sample of the training sentences for `fraction` drawn with `seed` (written unless
        this is a dry run), trained for as many updates as the full set, up to
        subsample_max_epochs."""
        file_name = f"{task.name}_train_{100 * fraction:g}pct_seed{seed}.txt"
        sample = os.path.join(self.output_dir, "data", file_name)
        if not self.dry_run:
            sentences = self.training_sentences(task, overrides)
            write_sentences(sample_sentences(sentences, fraction, seed), sample)
        budget = self.budgets[task.name]
        epochs = min(budget["subsample_max_epochs"], round(budget["epochs"] / fraction))
        scheme = (overrides.get("dataset_reader.tag_scheme")
                  or config_value(task.configs["baseline"], "dataset_reader")["tag_scheme"])
        return {
            "train_data_path": sample,
            "trainer.num_epochs": epochs,
            # No early stopping: on a few sentences dev F1 can stay 0 for several epochs.
            "trainer.patience": None,
            # The label vocabulary comes from train only, and a sample can miss tags dev has.
            "vocabulary.tokens_to_add": {"labels": entity_tags(scheme)},
        }

    def training_sentences(self, task: Task, overrides: Dict[str, Any]) -> List[str]:
        source = overrides.get("train_data_path") or config_value(task.configs["baseline"], "train_data_path")
        return conll_sentences(os.path.join(PROJECT_ROOT, source))

    def training_sentence_count(self, task_name: str, fraction: float) -> int:
        sentences = self.training_sentences(TASKS[task_name], self.extra_overrides[task_name])
        return sample_size(len(sentences), fraction)


def entity_tags(tag_scheme: str) -> List[str]:
    """Every CoNLL-2003 tag of a scheme (BIO or BIOUL)."""
    prefixes = [prefix for prefix in tag_scheme if prefix != "O"]
    return ["O"] + [f"{prefix}-{kind}" for kind in ("PER", "LOC", "ORG", "MISC") for prefix in prefixes]


def config_value(config: str, key: str) -> Any:
    path = os.path.join(PROJECT_ROOT, "elmo_plugin", "training_configs", f"{config}.jsonnet")
    return json.loads(_jsonnet.evaluate_file(path))[key]


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


def task_overrides(items: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    """`TASK=JSON` items as AllenNLP overrides per task."""
    overrides: Dict[str, Dict[str, Any]] = {name: {} for name in TASKS}
    for item in items:
        task_name, _, text = item.partition("=")
        if task_name not in TASKS:
            raise SystemExit(f"--overrides {item}: expected TASK=JSON with TASK one of {sorted(TASKS)}")
        overrides[task_name].update(json.loads(text))
    return overrides


def conll_sentences(path: str) -> List[str]:
    """The sentences of a CoNLL-2003 file, each as its block of lines (no -DOCSTART-)."""
    with open(path, encoding="utf-8") as handle:
        blocks = [block.strip("\n") for block in handle.read().split("\n\n")]
    return [block for block in blocks if block and not block.startswith("-DOCSTART-")]


def sample_sentences(sentences: List[str], fraction: float, seed: int) -> List[str]:
    """`fraction` of the sentences (at least one), drawn with `seed`, in their original order."""
    count = sample_size(len(sentences), fraction)
    chosen = sorted(random.Random(seed).sample(range(len(sentences)), count))
    return [sentences[index] for index in chosen]


def sample_size(total: int, fraction: float) -> int:
    return max(1, round(fraction * total))


def write_sentences(sentences: List[str], path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n\n".join(sentences) + "\n")


# ---------------------------------------------------------------- what each table shows


def task_of(run: Run) -> Task:
    return TASKS[run.name.split("/")[0]]


def headline(result: Result) -> Optional[float]:
    """The run's main test score (F1, accuracy), in percent."""
    task = task_of(result.run)
    return 100 * result.metrics[task.test_metrics[-1]] if result.ok else None


def seed_mean(results: List[Result]) -> Result:
    """One result for runs of the same settings at several seeds: their mean metrics, with each
    metric's sample standard deviation in `spread`; failed if any of them failed."""
    first = results[0]
    if len(results) == 1:
        return first
    failed = [result for result in results if not result.ok]
    if failed:
        return Result(first.run, error=failed[0].error, seeds=len(results))
    keys = [key for key in first.metrics
            if all(is_number(result.metrics.get(key)) for result in results)]
    values = {key: [result.metrics[key] for result in results] for key in keys}
    return Result(
        first.run,
        metrics={key: statistics.mean(series) for key, series in values.items()},
        wall_clock_s=sum(result.wall_clock_s or 0.0 for result in results),
        cached=all(result.cached for result in results),
        seeds=len(results),
        spread={key: statistics.stdev(series) for key, series in values.items()},
    )


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def percent(result: Result, key: str) -> str:
    """A metric in percent; for a mean over seeds with its standard deviation."""
    text = f"{100 * result.metrics[key]:.2f}"
    return text + (f" ± {100 * result.spread[key]:.2f}" if key in result.spread else "")


def test_score(result: Result) -> str:
    if not result.ok:
        return "failed"
    task = task_of(result.run)
    return " / ".join(percent(result, key) for key in task.test_metrics)


def dev_score(result: Result) -> str:
    task = task_of(result.run)
    return percent(result, task.dev_metric) if task.dev_metric in result.metrics else "-"


def dev_and_test(result: Result) -> str:
    return f"{dev_score(result)} / {test_score(result)}"


def increase(baseline: Result, elmo: Result) -> str:
    base, better = headline(baseline), headline(elmo)
    if base is None or better is None:
        return "-"
    relative = (better - base) / (100 - base) * 100 if base < 100 else float("nan")
    return f"{better - base:+.2f} / {relative:.1f}%"


def headline_increase(baseline: Result, elmo: Result) -> str:
    base, better = headline(baseline), headline(elmo)
    return "-" if base is None or better is None else f"{better - base:+.2f}"


def runs_table(results: Sequence[Result]) -> str:
    rows = [
        [f"`{result.run.name}`", dev_score(result), test_score(result),
         str(result.metrics.get("epoch", -1) + 1) if result.ok else "-",
         minutes(result.wall_clock_s), "earlier job" if result.cached else "this job"]
        for result in results
    ]
    return markdown_table(["run", "best dev", "test", "epochs", "wall-clock", "trained in"], rows)


# ---------------------------------------------------------------- the tables


DEFAULT_TASKS = {"table1": list(TASKS), "table2": ["ner", "snli"], "table3": ["snli"], "figure2": list(TASKS)}


class PaperTables:
    """Builds each table's runs with `plan`, trains them with `runner`, and renders them.
    `tasks` (None: each table's own) chooses the tasks of table1, table2, table3 and figure2."""

    def __init__(self, plan: Plan, runner: Runner, tasks: Optional[Sequence[str]],
                 fractions: Sequence[float], figure: str) -> None:
        self.plan, self.runner, self.chosen_tasks = plan, runner, tasks
        self.fractions, self.figure = sorted(fractions), figure

    def tasks(self, table: str) -> List[str]:
        chosen = DEFAULT_TASKS[table] if self.chosen_tasks is None else self.chosen_tasks
        if table == "table3":  # only tasks with ELMo at the output
            chosen = [name for name in chosen if "elmo_output" in TASKS[name].configs]
        return [name for name in TASKS if name in chosen]

    def cell_results(self, cells: List[List[Run]]) -> Tuple[List[Result], List[Result]]:
        """Trains every run of `cells` (a cell: the same settings at each seed of the job) and
        returns each cell's result (the mean over its seeds) and every run's own result."""
        results = self.runner.results_of(run for cell in cells for run in cell)
        return [seed_mean([results[run.name] for run in cell]) for cell in cells], list(results.values())

    def table1(self) -> Tuple[str, List[Result]]:
        names = self.tasks("table1")
        cells = [self.plan.runs(name, variant) for name in names for variant in ("baseline", TASKS[name].table1_elmo)]
        cell_results, results = self.cell_results(cells)
        rows = []
        for name, baseline_runs, elmo_runs, base, with_elmo in zip(
                names, cells[::2], cells[1::2], cell_results[::2], cell_results[1::2]):
            task = TASKS[name]
            at_each_seed = ", ".join(headline_increase(self.runner.results[baseline.name], self.runner.results[elmo.name])
                                     for baseline, elmo in zip(baseline_runs, elmo_runs))
            rows.append([task.title, f"test {task.metric_name}", test_score(base), test_score(with_elmo),
                         increase(base, with_elmo)]
                        + ([at_each_seed] if self.plan.extra_seeds else [])
                        + [f"{dev_score(base)} / {dev_score(with_elmo)}", task.table1_elmo, self.budget_text(task.name)])
        header = (["task", "metric", "baseline", "+ELMo", "increase (absolute / relative error reduction)"]
                  + (["increase at each seed"] if self.plan.extra_seeds else [])
                  + ["best dev: baseline / +ELMo", "ELMo variant", "budget"])
        return markdown_table(header, rows), results

    def table2(self) -> Tuple[str, List[Result]]:
        return self.dev_and_test_table("table2", lambda name: [
            self.plan.runs(name, "baseline"),
            self.plan.runs(name, TASKS[name].input_elmo, top_layer_only=True),
            self.plan.runs(name, TASKS[name].input_elmo, regularization=1.0),
            self.plan.runs(name, TASKS[name].input_elmo, regularization=DEFAULT_LAMBDA),
        ], ["baseline", "last only", "all layers, λ=1", "all layers, λ=0.001"])

    def table3(self) -> Tuple[str, List[Result]]:
        variants = ["baseline", "elmo_input", "elmo_input_output", "elmo_output"]
        return self.dev_and_test_table(
            "table3", lambda name: [self.plan.runs(name, variant) for variant in variants],
            ["baseline", "input only", "input & output", "output only"],
        )

    def dev_and_test_table(self, table: str, cells_of: Callable[[str], List[List[Run]]],
                           columns: List[str]) -> Tuple[str, List[Result]]:
        """A row per task, a column per cell: dev / test scores."""
        rows, all_results = [], []
        for name in self.tasks(table):
            cell_results, results = self.cell_results(cells_of(name))
            all_results += results
            task = TASKS[name]
            rows.append([task.title, f"dev / test {task.metric_name}"]
                        + [dev_and_test(result) for result in cell_results] + [self.budget_text(name)])
        return markdown_table(["task", "metric"] + columns + ["budget"], rows), all_results

    def sample_efficiency(self) -> Tuple[str, List[Result]]:
        cells = [self.plan.runs("ner", variant, fraction=fraction)
                 for fraction in self.fractions for variant in ("baseline", "elmo")]
        cell_results, results = self.cell_results(cells)
        rows = []
        for fraction, baseline_runs, base, with_elmo in zip(
                self.fractions, cells[::2], cell_results[::2], cell_results[1::2]):
            rows.append([f"{100 * fraction:g}%", str(self.plan.training_sentence_count("ner", fraction)),
                         str(baseline_runs[0].overrides["trainer.num_epochs"]),
                         test_score(base), test_score(with_elmo), increase(base, with_elmo)])
        header = ["training sentences", "count", "epochs", "baseline test F1", "+ELMo test F1",
                  "increase (absolute / relative error reduction)"]
        return markdown_table(header, rows), results

    def figure2(self) -> Tuple[str, List[Result]]:
        runs = [self.plan.run(name, TASKS[name].table1_elmo) for name in self.tasks("figure2")]
        results = list(self.runner.results_of(runs).values())
        groups = [group for result in results if result.ok for group in layer_weight_groups(result)]
        if not groups:
            return "(no finished +ELMo run to draw)", results
        os.makedirs(os.path.dirname(os.path.abspath(self.figure)), exist_ok=True)
        title = "Learned ELMo layer weights softmax(s) per task (best epoch)"
        plot_layer_weights.draw(groups, title, self.figure)
        layers = plot_layer_weights.layer_names(groups) + [GAMMA]
        rows = [[name] + [f"{mix.get(layer, float('nan')):.3f}" for layer in layers] for name, mix in groups]
        image = os.path.relpath(os.path.abspath(self.figure), self.plan.output_dir)
        return markdown_table(["task"] + layers, rows) + f"\n\n![layer weights]({image})", results

    def budget_text(self, task_name: str) -> str:
        return ", ".join(f"{knob} {value}" for knob, value in self.plan.budgets[task_name].items()
                         if knob != "subsample_max_epochs")


def layer_weight_groups(result: Result) -> List[Tuple[str, plot_layer_weights.Mix]]:
    """The run's layer weights at its best epoch (the archived model), one group per mix,
    named by place when the model has ELMo at its input and output."""
    phases = ("best_validation", "training")  # SQuAD has no validation: its last epoch is kept
    mixes = plot_layer_weights.mixes_in_metrics(result.metrics, phases, result.run.name)
    task = task_of(result.run).name
    places = ["input", "output"] if len(mixes) == 2 else [""]
    return [(f"{task} {place}".strip(), mix) for place, (_, mix) in zip(places, sorted(mixes.items()))]


TITLES = {
    "table1": "Table 1: baseline against +ELMo, test set",
    "table2": "Table 2: all biLM layers (λ=1, λ=0.001) against the top layer only",
    "table3": "Table 3: ELMo at the input, at the output, or both",
    "sample_efficiency": "Sample efficiency: CoNLL-2003 NER test F1 against training data",
    "figure2": "Figure 2: learned layer weights of the table 1 +ELMo runs",
}


def report_table(table: str, body: str, results: List[Result], seconds: float, trained: int,
                 plan: Plan, runner: Runner) -> str:
    """The table's markdown with its runs, settings and wall-clock; `trained` of the runs
    trained for this table, in `seconds`."""
    total = sum(result.wall_clock_s or 0.0 for result in results)
    return "\n".join([
        f"## {TITLES[table]}", "", body, "",
        f"biLM: {plan.bilm.description()}; {seeds_text(plan, table)}; "
        f"{runner.threads} thread(s) a run, {runner.parallel} run(s) at a time.", "",
        runs_table(results), "",
        f"Wall-clock: {minutes(seconds)} for this table ({trained} of its {len(results)} runs "
        f"trained for it, the others finished before it); the runs' own wall-clocks sum to "
        f"{minutes(total)}.", "",
    ])


def seeds_text(plan: Plan, table: str) -> str:
    seeds = f"seeds {'/'.join(map(str, plan.seeds.values()))} (random/numpy/pytorch)"
    if not plan.extra_seeds or table == "figure2":
        return seeds
    extra = ", ".join(map(str, plan.extra_seeds))
    return (f"each cell the mean ± sample standard deviation of {1 + len(plan.extra_seeds)} runs: "
            f"{seeds} and {extra} (all three seeds the same)")


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tables", nargs="+", choices=TABLES + ["all"])
    parser.add_argument("--bilm-options", default="elmo_plugin/pretrained/elmo_wikipedia_512x128/options.json")
    parser.add_argument("--bilm-weights", default="elmo_plugin/pretrained/elmo_wikipedia_512x128/weights.hdf5")
    parser.add_argument("--output-dir", default="runs/paper_tables")
    parser.add_argument("--tasks", nargs="+", choices=sorted(TASKS),
                        help="the tasks of table1, table2, table3 (snli, squad) and figure2; default: "
                        + "; ".join(f"{table} {' '.join(names)}" for table, names in DEFAULT_TASKS.items()))
    parser.add_argument("--seed", type=int, help="every run's random, numpy and torch seed (default: "
                        "AllenNLP's own, 13370, 1337 and 133), and the sample's")
    parser.add_argument("--extra-seeds", nargs="+", type=int, default=[], metavar="SEED",
                        help="train every cell of table1, table2, table3 and sample_efficiency "
                             "again at each of these seeds (random, numpy and torch seed, and the "
                             "sample's) and show the mean ± standard deviation over all seeds")
    parser.add_argument("--set", nargs="+", action="extend", default=[], metavar="TASK.KNOB=VALUE",
                        help=f"budget knobs, defaults: {knob_list()}")
    parser.add_argument("--overrides", nargs="+", action="extend", default=[], metavar="TASK=JSON",
                        help='AllenNLP overrides for every run of a task, e.g. '
                             'ner=\'{"train_data_path": "fixtures/ner/train.txt"}\'')
    parser.add_argument("--fractions", nargs="+", type=float, default=[0.01, 0.1, 1.0],
                        help="sample_efficiency's fractions of the training sentences")
    parser.add_argument("--figure", help="figure2's PNG (default <output-dir>/figure2.png)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--parallel", type=int, default=2, help="runs trained at once")
    parser.add_argument("--force", action="store_true", help="retrain runs finished by an earlier job")
    parser.add_argument("--dry-run", action="store_true", help="print the commands of the runs to train")
    args = parser.parse_args(argv)
    args.tables = TABLES if "all" in args.tables else [t for t in TABLES if t in args.tables]
    args.figure = args.figure or os.path.join(args.output_dir, "figure2.png")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    plan = Plan(args)
    runner = Runner(args.parallel, args.threads, args.force, args.dry_run)
    tables = PaperTables(plan, runner, args.tasks, args.fractions, args.figure)
    for table in args.tables:
        start, trained_before = time.perf_counter(), len(runner.trained)
        body, results = getattr(tables, table)()
        if args.dry_run:
            continue
        seconds, trained = time.perf_counter() - start, len(runner.trained) - trained_before
        markdown = report_table(table, body, results, seconds, trained, plan, runner)
        os.makedirs(plan.output_dir, exist_ok=True)
        with open(os.path.join(plan.output_dir, f"{table}.md"), "w", encoding="utf-8") as handle:
            handle.write(markdown)
        print(markdown, flush=True)
    failed = [result for result in runner.results.values() if not result.ok and not args.dry_run]
    for result in failed:
        print(f"FAILED {result.run.name}: {result.error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
