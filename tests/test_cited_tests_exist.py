"""Every test file that the package, the benchmarks, the experiments, the scripts and the docs
cite as checking something (`tests/....py`) exists: a reader who follows the citation finds the
check."""

import re
from pathlib import Path
from typing import List

from tests.paths import PROJECT_ROOT

CITED = re.compile(r"tests/[A-Za-z0-9_/]+\.py")
CITING = ["elmo_plugin", "benchmarks", "experiments", "scripts", "gpu", "docs"]
SUFFIXES = {".py", ".md", ".sh", ".jsonnet", ".libsonnet"}


def citing_files() -> List[Path]:
    files = [PROJECT_ROOT / "README.md"]
    for folder in CITING:
        files += [p for p in sorted((PROJECT_ROOT / folder).rglob("*")) if p.suffix in SUFFIXES]
    return files


def missing_citations(text: str, name: str, root: Path = PROJECT_ROOT) -> List[str]:
    return [f"{name}: {cited}" for cited in CITED.findall(text) if not (root / cited).is_file()]


def test_every_cited_test_file_exists():
    missing = [
        line
        for path in citing_files()
        for line in missing_citations(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not missing, "cited test files that do not exist:\n" + "\n".join(missing)


def test_a_citation_of_a_missing_file_is_reported(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_here.py").write_text("")
    text = "checked by tests/test_here.py and tests/test_gone.py"
    assert missing_citations(text, "m.py", tmp_path) == ["m.py: tests/test_gone.py"]
