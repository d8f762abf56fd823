"""
The results in the docs, rendered from the records (experiments/results/): every marked region

    <!-- generated: NAME -->
    ...
    <!-- end generated -->

of README.md, docs/*.md and the shipped biLM's model card is NAME's rendering (RENDERERS),
from the scores files only: nothing trains, a run is read back only while its record matches
its config (experiments/allennlp_runs.py), and a row with a run that has no record is left out
(named on stderr). `make tables` runs this after training; tests/experiments/test_render_docs.py
checks that every region is up to date and that no number of the records is pasted outside one
(numbers kept by hand whose runs have no record, the stage-1 tables, are marked
`<!-- not from the records: WHY -->` ... `<!-- end not from the records -->`).

    python experiments/render_docs.py          # rewrites the regions, docs/elmo_layer_weights.png
    python experiments/render_docs.py --check  # changes nothing; exit 1 naming each stale region
                                               # and each number of the records pasted elsewhere

The jobs whose records the docs show are JOBS; `make tables` trains them with the same arguments.
"""

import argparse
import difflib
import functools
import glob
import os
import re
import shlex
import sys
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

if __package__ in (None, ""):  # run as a file: the project root, not experiments/, on the path
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from experiments import lane_count_table  # noqa: E402
from experiments.allennlp_runs import PROJECT_ROOT, Result, Runner  # noqa: E402
from experiments.markdown import Table, markdown_table, minutes  # noqa: E402
from experiments.paper_tables import parse_args  # noqa: E402
from experiments.planning import Plan  # noqa: E402
from experiments.report import TITLES, environments_text, runs_table, seeds_text  # noqa: E402
from experiments.scores import headline, headline_increase, percent, seed_mean  # noqa: E402
from experiments.tables import DEFAULT_TASKS, PaperTables  # noqa: E402
from experiments.tasks import TASKS  # noqa: E402

RECORDS = "experiments/results/paper_tables"
FIGURE = "docs/elmo_layer_weights.png"
# experiments/paper_tables.py's arguments of each job whose records the docs show, its tables in
# the order it makes them. `make tables` trains the first two (a test checks); squad_budget
# was a one-off.
JOBS = {
    "paper_tables": "table1 table2 table3 sample_efficiency convergence finetuned "
    f"--extra-seeds 1 2 --records {RECORDS}",
    "figure2": f"figure2 --figure {FIGURE} --records {RECORDS}",
    "squad_budget": "table1 convergence --tasks squad --set squad.epochs=6 "
    "--records experiments/results/squad_budget",
}
JOB_TITLES = {"squad_budget": "SQuAD at 6 epochs"}
LANE_COUNT = "experiments/results/lane_count/runs.json"
# The paper's Table 1 (Peters et al. 2018, test sets): baseline -> with ELMo.
PAPER_TABLE1 = {
    "ner": "90.15 → 92.22",
    "srl": "81.4 → 84.6",
    "snli": "88.0 → 88.7",
    "squad": "81.1 → 85.8",
    "sst": "51.4 → 54.7",
    # On CoNLL-2012 (OntoNotes); ours is on LitBank, which stands in for it (docs/coref.md).
    "coref": "67.2 → 70.4 (CoNLL-2012)",
}
START = re.compile(r"<!-- generated: ([\w:/-]+) -->\n")
# Numbers kept by hand, marked so, whose runs have no record (the stage-1 tables): not checked.
PASTED = re.compile(
    r"<!-- not from the records: [^\n]*-->\n.*?<!-- end not from the records -->", re.DOTALL
)
END = "<!-- end generated -->"


def pages() -> List[str]:
    """The pages that may hold regions, relative to the project root."""
    found = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=PROJECT_ROOT))
    return found + sorted(glob.glob("elmo_plugin/pretrained/*/README.md", root_dir=PROJECT_ROOT))


class Job:
    """A job of JOBS, its runs read back from the records only."""

    def __init__(self, name: str, arguments: str, draw: bool = False) -> None:
        self.args = parse_args(shlex.split(arguments) + ["--output-dir", f"runs/{name}"])
        self.args.dry_run = True  # the plan writes no sample of the training data
        self.plan = Plan(self.args)
        self.missing: List[str] = []
        self.runner = Runner(records_only=True, report=self._report)
        figure = os.path.join(PROJECT_ROOT, self.args.figure) if draw else None
        self.tables = PaperTables(
            self.plan, self.runner, self.args.tasks, self.args.fractions, figure, True
        )

    def _report(self, line: str) -> None:
        if line.startswith("stale"):
            self.missing.append(line)

    @functools.lru_cache(maxsize=None)
    def table(self, name: str) -> Tuple[Table, List[Result]]:
        return getattr(self.tables, name)()

    def without_record(self) -> List[str]:
        names = [name for name, result in self.runner.results.items() if not result.ok]
        return sorted(names)


class Renderer:
    """Each region's markdown; the jobs' tables computed once, when first needed."""

    def __init__(self, draw: bool = False) -> None:
        self.draw = draw

    @functools.cached_property
    def jobs(self) -> Dict[str, Job]:
        return {
            name: Job(name, arguments, self.draw and name == "figure2")
            for name, arguments in JOBS.items()
        }

    def job_table(self, job: str, table: str) -> Tuple[Table, List[Result]]:
        return self.jobs[job].table(table)

    def cell(self, table: str, task: str, variant: str, **settings: Any) -> Result:
        """A cell of a table of the main job: its runs' mean (an error if one has none)."""
        job = self.jobs["paper_tables"]
        job.table(table)
        runs = job.plan.runs(task, variant, **settings)
        return seed_mean([job.runner.results[run.name] for run in runs])

    def render(self, name: str) -> str:
        kind, _, argument = name.partition(":")
        if kind not in RENDERERS:
            raise KeyError(f"no renderer for region '{name}' (known: {', '.join(RENDERERS)})")
        return RENDERERS[kind](self, argument).rstrip("\n")

    def record_numbers(self) -> set:
        """The numbers the records give the tables (their cells but the budget), and the lane
        count table's: what a copy outside a region would repeat. (Not each run's own scores,
        which stage-1 numbers, pasted by hand, happen to equal.)"""
        cells = [lane_count(self, "")]
        for job in self.jobs.values():
            for table in job.args.tables:
                body, _ = job.table(table)
                shown = Table(body.header, body.rows).markdown(without=["budget"])
                cells.append("\n".join(shown.split("\n")[2:]))
        return record_numbers("\n".join(cells))

    def notes(self) -> List[str]:
        """What the rendering left out: runs without a (matching) record."""
        lines = []
        for name, job in self.jobs.items():
            lines += [f"{name}: {line}" for line in job.missing]
            missing = job.without_record()
            if missing:
                lines.append(
                    f"{name}: {len(missing)} runs without a record, their rows left out: "
                    + ", ".join(missing)
                )
        return lines


# The columns the docs leave out of a job's table: the budget (the docs show it once, BUDGETS)
# and table 1's ELMo variant (each task's is the paper's).
LEFT_OUT = {"table1": ["ELMo variant", "budget"]}


def job_table(renderer: Renderer, argument: str) -> str:
    """A table of the main job, or of the job named before a '/' (`squad_budget/table1`), as
    the job prints it, without the columns of LEFT_OUT."""
    job, _, table = argument.rpartition("/")
    body, _ = renderer.job_table(job or "paper_tables", table)
    return body.markdown(without=LEFT_OUT.get(table, ["budget"]))


def headline_metric(task_name: str) -> str:
    """The name of a task's headline test metric: "span F1", "argument F1 excl. V", "F1"."""
    parts = TASKS[task_name].metric_name.split(" / ")
    prefix = " ".join(parts[0].split(" ")[:-1]) if len(parts) > 1 else ""
    return f"{prefix} {parts[-1]}".strip()


def table1_cells(renderer: Renderer) -> Iterator[Tuple[str, List[Result], List[Result]]]:
    """Each task of table 1 with every run of its record: the baseline runs and the +ELMo
    runs at the job's seeds (tasks with a run without a record left out)."""
    job = renderer.jobs["paper_tables"]
    job.table("table1")
    for name, task in TASKS.items():
        baseline, elmo = (
            [job.runner.results[run.name] for run in job.plan.runs(name, variant)]
            for variant in ("baseline", task.table1_elmo)
        )
        if all(result.ok for result in baseline + elmo):
            yield name, baseline, elmo


def readme_results(renderer: Renderer, _: str) -> str:
    rows = []
    for name, baseline, elmo in table1_cells(renderer):
        key = TASKS[name].test_metrics[-1]
        base, better = seed_mean(baseline), seed_mean(elmo)
        rows.append(
            [
                TASKS[name].title,
                headline_metric(name),
                percent(base, key),
                f"**{percent(better, key)}** ({headline_increase(base, better)})",
                PAPER_TABLE1.get(name, "-"),
            ]
        )
    header = ["task", "test", "baseline", "+ELMo (gain)", "the paper"]
    return markdown_table(header, rows)


def job_overview(renderer: Renderer, _: str) -> str:
    """Each table's command, its runs (those with a record), how many of them are new (not in
    a table the jobs make before it) and their own wall-clocks, summed."""
    seen: set = set()
    rows = []
    for job_name, job in renderer.jobs.items():
        for table in job.args.tables:
            results = job.table(table)[1]
            runs = {(result.run.records_file, result.run.name): result for result in results}
            recorded = {key: result for key, result in runs.items() if result.ok}
            new = [result for key, result in recorded.items() if key not in seen]
            seen.update(recorded)
            arguments = table_arguments(job_name, table).split(" --records")[0]
            rows.append(
                [
                    f"`python experiments/paper_tables.py {arguments}`",
                    str(len(recorded)),
                    str(len(new)),
                    minutes(sum(result.wall_clock_s or 0.0 for result in new)) if new else "-",
                ]
            )
    header = ["command (`--records DIR` added)", "runs", "new runs", "the new runs' wall-clock"]
    return markdown_table(header, rows)


def table_arguments(job_name: str, table: str) -> str:
    """paper_tables.py's arguments of a job of JOBS for one of its tables."""
    arguments = JOBS[job_name]
    tables = renderer_tables(arguments)
    return arguments.replace(" ".join(tables), table) if len(tables) > 1 else arguments


def renderer_tables(arguments: str) -> List[str]:
    words = arguments.split(" ")
    return words[: next(i for i, word in enumerate(words) if word.startswith("--"))]


def _unique(results: Sequence[Result]) -> List[Result]:
    return list({result.run.name: result for result in results}.values())


def budgets(renderer: Renderer, _: str) -> str:
    plan = renderer.jobs["paper_tables"].plan
    rows = [[task.title, budget_text(plan, name)] for name, task in TASKS.items()]
    return markdown_table(["task", "budget (`--set TASK.KNOB=VALUE` changes it)"], rows)


def budget_text(plan: Plan, task: str) -> str:
    return ", ".join(
        f"{knob} {value}"
        for knob, value in plan.budgets[task].items()
        if knob != "subsample_max_epochs"
    )


def runs_page(renderer: Renderer, _: str) -> str:
    """Every run behind the tables: scores, epochs, wall-clock, environment."""
    sections = []
    for job_name, job in renderer.jobs.items():
        for table in job.args.tables:
            results = [result for result in _unique(job.table(table)[1]) if result.ok]
            if not results:
                continue
            total = sum(result.wall_clock_s or 0.0 for result in results)
            title = TITLES[table] + (f" ({JOB_TITLES[job_name]})" if job_name in JOB_TITLES else "")
            sections += [
                f"## {title}",
                "",
                f"`python experiments/paper_tables.py {table_arguments(job_name, table)}`; "
                f"biLM {job.plan.bilm.description()}; {seeds_text(job.plan, table)}.",
                "",
                environments_text(results),
                "",
                runs_table(results, trained_in=False),
                "",
                f"The runs' own wall-clocks sum to {minutes(total)}.",
                "",
            ]
    return "\n".join(sections)


def task_results(renderer: Renderer, task: str) -> str:
    """A task's rows of the tables it appears in, with its budget."""
    parts = [f"Budget: {budget_text(renderer.jobs['paper_tables'].plan, task)}."]
    title = TASKS[task].title
    for table, left_out in [
        ("table1", ["ELMo variant", "budget"]),
        ("finetuned", ["budget"]),
        ("table2", ["budget"]),
        ("table3", ["budget"]),
        ("sample_efficiency", ["task"]),
    ]:
        body, _ = renderer.job_table("paper_tables", table)
        rows = [row for row in body.rows if row[0] == title]
        if table == "finetuned":
            rows = rows[1:]  # its first row is table 1's
        if rows:
            name = TABLE_NAMES[table]
            shown = Table(body.header, rows).markdown(without=left_out)
            parts += ["", f"{name} ([all tasks](paper_tables.md#{ANCHORS[table]})):", "", shown]
    if len(parts) == 1:
        parts += [
            "",
            "No records yet: `python experiments/paper_tables.py table1 --tasks "
            f"{task} --extra-seeds 1 2 --records {RECORDS}` trains them.",
        ]
    return "\n".join(parts)


TABLE_NAMES = {
    "table1": "Table 1, test set, mean ± standard deviation of 3 seeds",
    "finetuned": "With the biLM fine-tuned (not the paper's)",
    "table2": "Table 2, which layers, dev / test",
    "table3": "Table 3, where ELMo goes, dev / test",
    "sample_efficiency": "Sample efficiency, test set, 3 seeds",
}
ANCHORS = {
    "table1": "table-1",
    "finetuned": "srl-the-bug-that-hid-elmos-gain",
    "table2": "table-2-which-layers-dev--test-3-seeds",
    "table3": "table-3-where-elmo-goes-snli-dev--test-accuracy-3-seeds",
    "sample_efficiency": "sample-efficiency-test-scores-3-seeds",
}


def sampled_task_line(renderer: Renderer, name: str) -> List[str]:
    """The model card's line of a task's sample-efficiency cells (mean ± spread over the seeds),
    if any is recorded."""
    task = TASKS[name]
    metric = task.test_metrics[-1]
    fractions = []
    for fraction in renderer.jobs["paper_tables"].args.fractions:
        if fraction < 1.0:
            base, better = (
                renderer.cell("sample_efficiency", name, variant, fraction=fraction)
                for variant in ("baseline", task.table1_elmo)
            )
            if base.ok and better.ok:
                fractions.append(
                    f"with {100 * fraction:g}% {percent(base, metric)} → {percent(better, metric)}"
                )
    if not fractions:
        return []
    return [
        f"- {task.title} with part of its training sentences: {task.metric_name} "
        f"{', '.join(fractions)}."
    ]


def model_card(renderer: Renderer, _: str) -> str:
    """The downstream results of the shipped biLM: each task's baseline -> +ELMo, its gain and
    the gain at each seed."""
    plan = renderer.jobs["paper_tables"].plan
    rows = []
    for name, baseline, elmo in table1_cells(renderer):
        gains = [headline_gain(base, better) for base, better in zip(baseline, elmo)]
        base, better = seed_mean(baseline), seed_mean(elmo)
        rows.append(
            [
                TASKS[name].title,
                headline_metric(name),
                str(plan.budgets[name]["epochs"]),
                f"{headline(base):.2f} → {headline(better):.2f}",
                f"{headline_increase(base, better)} ({min(gains):+.2f} to {max(gains):+.2f})",
            ]
        )
    header = ["task", "test", "epochs", "baseline → +ELMo", "gain (at each seed)"]
    lines = [markdown_table(header, rows), ""]
    finetuned = renderer.cell("finetuned", "srl", "elmo_finetuned", compute_dtype="bfloat16")
    if finetuned.ok:
        srl_baseline = renderer.cell("finetuned", "srl", "baseline")
        lines.append(
            f"- SRL with the biLM fine-tuned with the SRL model (not the paper's; ELMo in "
            f"bfloat16): {headline(finetuned):.2f} "
            f"({headline_increase(srl_baseline, finetuned)})."
        )
    for name in DEFAULT_TASKS["sample_efficiency"]:
        lines += sampled_task_line(renderer, name)
    top_layer = []
    for name in ("ner", "snli"):
        variant = TASKS[name].input_elmo
        top, all_layers = (
            renderer.cell("table2", name, variant, **settings)  # type: ignore[arg-type]
            for settings in ({"top_layer_only": True}, {})
        )
        if top.ok and all_layers.ok:
            top_layer.append(
                f"{TASKS[name].title} {headline(top):.2f} against {headline(all_layers):.2f}"
            )
    if top_layer:
        lines.append(
            "- The top layer alone against the mix of all three (Table 2, ELMo at the input): "
            + "; ".join(top_layer)
            + "."
        )
    return "\n".join(lines)


def headline_gain(baseline: Result, elmo: Result) -> float:
    return headline(elmo) - headline(baseline)  # type: ignore[operator]


def lane_count(renderer: Renderer, _: str) -> str:
    return lane_count_table.table(lane_count_table.rows_of_records(LANE_COUNT))


RENDERERS: Dict[str, Callable[[Renderer, str], str]] = {
    "readme-results": readme_results,
    "job-overview": job_overview,
    "budgets": budgets,
    "table": job_table,
    "runs": runs_page,
    "task-results": task_results,
    "model-card": model_card,
    "lane-count": lane_count,
}


# A number as the tables write it (84.75, +3.66, 0.196, 1415.8): a decimal point and a digit
# either side, not part of a longer token (a version, a path), with its sign if it has one.
NUMBER = re.compile(r"(?<![\w.+-])[+-]?\d+\.\d+(?![\w]|\.\d)")
# A standard deviation as the tables write it, after its mean.
SPREAD = re.compile(r"± \d+\.\d+(?![\w]|\.\d)")
# Code (fenced blocks, `spans`) is a command's output or input, not a result.
CODE = re.compile(r"^```.*?^```[^\n]*$|`[^`\n]*`", re.MULTILINE | re.DOTALL)


def record_numbers(text: str) -> set:
    """The numbers of `text` that a copy pasted elsewhere would repeat, and only a copy would:
    four digits or more (84.75, 0.196, 1415.8), a signed one with two decimals (a gain,
    +3.66), or a spread with its sign (`± 0.57`); a short number alone (0.57) is too often
    another number too."""
    numbers = {
        number
        for number in NUMBER.findall(text)
        if len(re.sub(r"\D", "", number)) >= 4 or re.fullmatch(r"[+-]\d+\.\d\d", number)
    }
    return numbers | {match.group(0) for match in SPREAD.finditer(text)}


def pasted_numbers(text: str, numbers: set) -> List[Tuple[int, str]]:
    """Each number of `numbers` that `text` has outside its regions and its code, with its
    line: a copy of a record's number that no rendering keeps up to date."""
    masked = text
    for _, start, end in regions(text):
        masked = masked[:start] + _blank(masked[start:end]) + masked[end:]
    masked = PASTED.sub(lambda match: _blank(match.group(0)), masked)
    masked = CODE.sub(lambda match: _blank(match.group(0)), masked)
    found = []
    for match in NUMBER.finditer(masked):
        if match.group(0) in numbers or match.group(0).lstrip("+-") in numbers:
            found.append((masked.count("\n", 0, match.start()) + 1, match.group(0)))
    for match in SPREAD.finditer(masked):
        if match.group(0) in numbers:
            found.append((masked.count("\n", 0, match.start()) + 1, match.group(0)))
    return sorted(found)


def _blank(text: str) -> str:
    """The text with everything but its line breaks blanked (line numbers stay)."""
    return re.sub(r"[^\n]", " ", text)


def pasted_record_numbers(renderer: Renderer) -> List[str]:
    """Every number of the records pasted outside a region on any page, as `page:line: number`."""
    texts = {page: _read(page) for page in pages()}
    numbers = renderer.record_numbers()
    return [
        f"{page}:{line}: {number}"
        for page, text in texts.items()
        for line, number in pasted_numbers(text, numbers)
    ]


def _read(page: str) -> str:
    with open(os.path.join(PROJECT_ROOT, page), encoding="utf-8") as handle:
        return handle.read()


def regions(text: str) -> Iterator[Tuple[str, int, int]]:
    """Each region of a page: its name and the span of its content (between the markers)."""
    for start in START.finditer(text):
        end = text.find(END, start.end())
        if end < 0:
            raise ValueError(f"region '{start.group(1)}' has no '{END}'")
        yield start.group(1), start.end(), end


def rendered_page(text: str, renderer: Renderer) -> str:
    """The page with every region's content rendered again."""
    parts, position = [], 0
    for name, start, end in regions(text):
        parts += [text[position:start], "\n", renderer.render(name), "\n\n"]
        position = end
    return "".join(parts) + text[position:]


def render_all(renderer: Renderer, check: bool) -> List[str]:
    """Renders every page's regions; returns the pages (with their diffs) that differ."""
    stale = []
    for page in pages():
        path = os.path.join(PROJECT_ROOT, page)
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if START.search(text) is None:
            continue
        new = rendered_page(text, renderer)
        if new == text:
            continue
        diff = "".join(
            difflib.unified_diff(
                text.splitlines(True), new.splitlines(True), page, f"{page} (rendered)", n=1
            )
        )
        stale.append(diff)
        if not check:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(new)
    return stale


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    renderer = Renderer(draw=not args.check)
    stale = render_all(renderer, args.check)
    if not args.check:
        renderer.job_table("figure2", "figure2")  # draws the figure
    for line in renderer.notes():
        print(line, file=sys.stderr)
    pasted = pasted_record_numbers(renderer)
    for line in pasted:
        print(f"{line}: a number of the records pasted outside a region", file=sys.stderr)
    if args.check:
        for diff in stale:
            print(diff, end="")
        if stale:
            print(
                f"{len(stale)} page(s) differ from the records: "
                "python experiments/render_docs.py renders them",
                file=sys.stderr,
            )
        return 1 if stale or pasted else 0
    for diff in stale:
        print(f"rendered {diff.splitlines()[0][4:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
