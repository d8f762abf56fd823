"""Every command block of README.md and docs/*.md whose first line is `# runnable` runs, as a
user runs it, in a fresh directory, with this environment's console scripts on PATH: a command
the docs show that stops working fails here. Only quick blocks are marked (seconds each)."""

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, NamedTuple

import pytest

from tests.paths import PROJECT_ROOT

MARKER = "# runnable"
BLOCK = re.compile(r"^```(?:bash|sh|console)?\n(.*?)^```", re.DOTALL | re.MULTILINE)
PAGES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
TIMEOUT_S = 300


class Block(NamedTuple):
    page: Path
    line: int
    commands: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(PROJECT_ROOT)}:{self.line}"


def runnable_blocks(page: Path) -> List[Block]:
    text = page.read_text(encoding="utf-8")
    return [
        Block(page, text.count("\n", 0, match.start()) + 1, match.group(1))
        for match in BLOCK.finditer(text)
        if match.group(1).split("\n", 1)[0].strip() == MARKER
    ]


BLOCKS = [block for page in PAGES for block in runnable_blocks(page)]


def run_block(block: Block, directory: Path) -> subprocess.CompletedProcess:
    scripts = os.path.dirname(sys.executable)
    environment = dict(os.environ, PATH=scripts + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.commands],
        cwd=directory,
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def test_the_readme_has_runnable_blocks():
    assert [block for block in BLOCKS if block.page.name == "README.md"]


@pytest.mark.parametrize("block", BLOCKS, ids=str)
def test_a_runnable_block_runs(block, tmp_path):
    result = run_block(block, tmp_path)
    assert result.returncode == 0, (
        f"{block}: exit {result.returncode}\n{block.commands}\n"
        f"{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    )


def test_only_marked_blocks_are_found_and_a_failing_one_fails(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```bash\nfalse\n```\n\n```bash\n# runnable\necho ok\nfalse\n```\n")
    (found,) = runnable_blocks(page)
    assert found.line == 5 and "echo ok" in found.commands
    assert run_block(found, tmp_path).returncode != 0
