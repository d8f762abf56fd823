"""The markdown pieces every table and report is made of."""

from dataclasses import dataclass
from typing import List, Optional, Sequence


def minutes(seconds: Optional[float]) -> str:
    return "-" if seconds is None else f"{seconds / 60:.1f} min"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


@dataclass
class Table:
    """A table's header and rows of cells, and what follows it (a figure, a note)."""

    header: List[str]
    rows: List[List[str]]
    after: str = ""

    def markdown(self, without: Sequence[str] = ()) -> str:
        """The table as markdown, without the columns named in `without`."""
        kept = [index for index, name in enumerate(self.header) if name not in without]
        text = markdown_table(
            [self.header[index] for index in kept],
            [[row[index] for index in kept] for row in self.rows],
        )
        return text + (f"\n\n{self.after}" if self.after else "")

    def column(self, name: str) -> List[str]:
        index = self.header.index(name)
        return [row[index] for row in self.rows]
