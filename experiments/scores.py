"""
What a table shows of a run's result: its test and dev scores in percent, the increase over a
baseline, and one result for a cell trained at several seeds (their mean and spread).
"""

import statistics
from typing import Any, List, Optional

from experiments.allennlp_runs import Result
from experiments.tasks import task_of


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
    keys = [
        key
        for key in first.metrics
        if all(is_number(result.metrics.get(key)) for result in results)
    ]
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


def headline_spread(result: Result) -> str:
    """The headline score's seed-to-seed standard deviation of a mean over seeds."""
    key = task_of(result.run).test_metrics[-1]
    return f"{100 * result.spread[key]:.2f}" if key in result.spread else "-"
