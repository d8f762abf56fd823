"""
How much disk an install takes, by what takes it (docs/install.md, "Size"): the bytes of every
installed distribution's files in this interpreter's environment, grouped as torch, the CUDA
libraries torch's CUDA build pulls in (`nvidia-*` and `triton`), AllenNLP and what the plugin
profile adds, and the rest; and how many of `pip check`'s lines are broken requirements, and
how many of those AllenNLP's.

    .venv/bin/python benchmarks/install_size.py
    .venv-allennlp-2.10/bin/python benchmarks/install_size.py
"""

import os
import platform
import re
import subprocess
import sys
from collections import defaultdict
from importlib import metadata
from typing import Dict

GB = 1e9


def group_of(name: str) -> str:
    name = name.lower().replace("_", "-")
    if name.startswith("nvidia-") or name == "triton":
        return "CUDA libraries (nvidia-*, triton)"
    if name == "torch":
        return "torch"
    return "everything else"


def installed_bytes() -> Dict[str, int]:
    """Bytes on disk of each group's distributions' files, counted once each."""
    sizes: Dict[str, int] = defaultdict(int)
    seen = set()
    for dist in metadata.distributions():
        group = group_of(dist.metadata["Name"] or "")
        for file in dist.files or []:
            path = os.path.realpath(str(file.locate()))
            if path in seen or not os.path.isfile(path):
                continue
            seen.add(path)
            sizes[group] += os.path.getsize(path)
    return dict(sizes)


# pip check's two kinds of broken requirement: "x 1.0 requires y, which is not installed." and
# "x 1.0 has requirement y<2, but you have y 3.0."; a clean environment prints "No broken
# requirements found.", which names no distribution and counts as none.
BROKEN_REQUIREMENT = re.compile(r"^\S+ \S+ (requires|has requirement) ")


def broken_requirements(pip_check_output: str) -> Dict[str, int]:
    """How many of pip check's lines are broken requirements, and how many are AllenNLP's."""
    lines = [line for line in pip_check_output.splitlines() if BROKEN_REQUIREMENT.match(line)]
    allennlp = [line for line in lines if line.startswith("allennlp ")]
    return {"all": len(lines), "AllenNLP's": len(allennlp)}


def pip_check_lines() -> Dict[str, int]:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "check"], capture_output=True, text=True, check=False
    )
    return broken_requirements(result.stdout)


def main() -> None:
    import torch

    sizes = installed_bytes()
    total = sum(sizes.values())
    print(
        f"Python {platform.python_version()}, torch {torch.__version__} "
        f"(CUDA {torch.version.cuda}), {sys.prefix}"
    )
    print("| what | GB |\n|---|---|")
    for group, size in sorted(sizes.items(), key=lambda item: -item[1]):
        print(f"| {group} | {size / GB:.2f} |")
    cuda = sizes.get("CUDA libraries (nvidia-*, triton)", 0)
    print(f"| **all** | **{total / GB:.2f}** |")
    print(f"| all but the CUDA libraries | {(total - cuda) / GB:.2f} |")
    print(f"pip check: {pip_check_lines()}")


if __name__ == "__main__":
    main()
