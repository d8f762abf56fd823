"""The markdown pieces every table and report is made of."""

from typing import List, Optional


def minutes(seconds: Optional[float]) -> str:
    return "-" if seconds is None else f"{seconds / 60:.1f} min"


def markdown_table(header: List[str], rows: List[List[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
