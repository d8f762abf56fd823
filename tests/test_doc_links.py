"""Every relative link of the README, docs/ and the shipped biLM's model card names a file that
exists and, with a `#fragment`, a heading of that file (GitHub's anchors)."""

import re
from pathlib import Path
from typing import Dict, List, Set, Tuple

from tests.paths import PROJECT_ROOT

PAGES = [
    PROJECT_ROOT / "README.md",
    *sorted((PROJECT_ROOT / "docs").glob("*.md")),
    *sorted((PROJECT_ROOT / "elmo_plugin" / "pretrained").glob("*/README.md")),
]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")


def _prose_lines(page: Path) -> List[Tuple[int, str]]:
    """The page's lines outside fenced code blocks, numbered from 1."""
    lines, in_code = [], False
    for number, line in enumerate(page.read_text(encoding="utf-8").split("\n"), start=1):
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            lines.append((number, line))
    return lines


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> Set[str]:
    seen: Dict[str, int] = {}
    anchors = set()
    for _, line in _prose_lines(page):
        heading = re.match(r"^#{1,6}\s+(.*)$", line)
        if heading:
            anchor = _anchor(heading.group(1))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def _broken_links(page: Path, root: Path = PROJECT_ROOT) -> List[str]:
    broken = []
    for number, line in _prose_lines(page):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            path, _, fragment = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(root)}:{number}: {target}"
            if not linked.exists():
                broken.append(f"{where} (no file {linked})")
            elif fragment and linked.suffix == ".md" and fragment not in _anchors(linked):
                broken.append(f"{where} (no heading with anchor #{fragment} in {linked.name})")
    return broken


def test_the_pages_checked_include_the_readme_and_docs():
    assert PROJECT_ROOT / "README.md" in PAGES and len(PAGES) > 5


def test_every_relative_link_names_an_existing_file_and_heading():
    broken = [problem for page in PAGES for problem in _broken_links(page)]
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_a_missing_file_or_heading_is_reported(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A `title`: here\n[ok](#a-title-here) [gone](other.md) [bad](#nowhere)\n"
        "```\n[in code](y.md)\n```\n"
    )
    problems = _broken_links(page, root=tmp_path)
    assert len(problems) == 2
    assert "other.md" in problems[0] and "#nowhere" in problems[1]
