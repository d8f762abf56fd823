"""The markdown around each table: its title, biLM, seeds and threads, its runs and wall-clock."""

from collections import Counter
from typing import List, Sequence

from experiments.allennlp_runs import Result, Runner
from experiments.markdown import Table, markdown_table, minutes
from experiments.planning import Plan
from experiments.scores import dev_score, test_score

TITLES = {
    "table1": "Table 1: baseline against +ELMo, test set",
    "table2": "Table 2: all biLM layers (λ=1, λ=0.001) against the top layer only",
    "table3": "Table 3: ELMo at the input, at the output, or both",
    "sample_efficiency": "Sample efficiency: test scores against the training data",
    "figure2": "Figure 2: learned layer weights of the table 1 +ELMo runs",
    "convergence": "Convergence: table 1's runs after each epoch (mean over seeds)",
    "bfloat16": "ELMo in bfloat16 against float32: the table 1 +ELMo runs at the same seeds",
    "finetuned": "The biLM frozen (table 1) and fine-tuned with the task model, against the "
    "same baselines",
}


def runs_table(results: Sequence[Result], trained_in: bool = True) -> str:
    """A row a run: its scores, epochs, wall-clock and (`trained_in`) which job trained it."""
    rows = [
        [
            f"`{result.run.name}`",
            dev_score(result),
            test_score(result),
            str(result.metrics.get("epoch", -1) + 1) if result.ok else "-",
            minutes(result.wall_clock_s),
        ]
        + (["earlier job" if result.cached else "this job"] if trained_in else [])
        for result in results
    ]
    header = ["run", "best dev", "test", "epochs", "wall-clock"]
    return markdown_table(header + (["trained in"] if trained_in else []), rows)


def report_table(
    table: str,
    body: Table,
    results: List[Result],
    seconds: float,
    trained: int,
    plan: Plan,
    runner: Runner,
) -> str:
    """The table's markdown with its runs, settings and wall-clock; `trained` of the runs
    trained for this table, in `seconds`."""
    total = sum(result.wall_clock_s or 0.0 for result in results)
    return "\n".join(
        [
            f"## {TITLES[table]}",
            "",
            body.markdown(),
            "",
            f"biLM: {plan.bilm.description()}; {seeds_text(plan, table)}; "
            f"{runner.threads} thread(s) a run, {runner.parallel} run(s) at a time.",
            "",
            environments_text(results),
            "",
            runs_table(results),
            "",
            f"Wall-clock: {minutes(seconds)} for this table ({trained} of its {len(results)} runs "
            f"trained for it, the others finished before it); the runs' own wall-clocks sum to "
            f"{minutes(total)}.",
            "",
        ]
    )


def environments_text(results: Sequence[Result]) -> str:
    """Each software environment the runs were trained in, with how many runs it trained."""
    counts = Counter(result.environment or "not recorded" for result in results)
    return "Trained with: " + "; ".join(
        f"{environment} ({count} run{'s' if count > 1 else ''})"
        for environment, count in counts.items()
    )


def seeds_text(plan: Plan, table: str) -> str:
    seeds = f"seeds {'/'.join(map(str, plan.seeds.values()))} (random/numpy/pytorch)"
    if not plan.extra_seeds or table == "figure2":
        return seeds
    extra = ", ".join(map(str, plan.extra_seeds))
    return (
        f"each cell the mean ± sample standard deviation of {1 + len(plan.extra_seeds)} runs: "
        f"{seeds} and {extra} (all three seeds the same)"
    )
