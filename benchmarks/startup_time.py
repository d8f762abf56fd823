"""
What installing the package costs every process at start-up (docs/performance.md, "Start-up"):

1. `python -c pass` in a fresh virtual environment without the package and in one with the
   built wheel installed: nothing of ours may run at interpreter start-up, so the two should be
   equal.
2. `elmo-embed --help` where the plugin is installed (this environment's distributions,
   AllenNLP among them) against where the core alone is (torch with what it requires, numpy,
   h5py, tqdm), the same wheel in both: the command needs no AllenNLP, so the plugin should
   cost it nothing (goal: at most 1.5x).

The environments are throwaway venvs of this interpreter's base Python; the distributions come
from this environment through a `.pth` line naming a folder of links, so nothing is downloaded.
Each command runs in turn with the others, `--repeats` times, and the medians are printed.

    .venv/bin/python benchmarks/startup_time.py [--repeats 20]
"""

import argparse
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from importlib import metadata
from typing import Dict, Iterable, List, Set, Tuple

from packaging.requirements import Requirement

from common import alternating_times, cpu_model, medians_of
from tests.wheels import build_project_wheel

CORE = ["torch", "numpy", "h5py", "tqdm"]


# The throwaway environments see only what they hold: no PYTHONPATH (a clone on it would make
# pip think the package installed, and every environment import the clone's code).
CLEAN_ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def _run(command: List[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(
        command, capture_output=True, text=True, env=CLEAN_ENVIRONMENT, **kwargs
    )
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: exit {result.returncode}\n{result.stderr[-2000:]}")
    return result


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_closure(names: Iterable[str]) -> Set[str]:
    """The installed distributions `names` need, theirs and their extras' included: what `pip
    install` of them would have installed."""
    todo = [(_normal(name), "") for name in names]
    seen: Set[Tuple[str, str]] = set()
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen:
            continue
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            continue
        seen.add((name, extra))
        for line in requires:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": extra}):
                needed = _normal(requirement.name)
                todo += [(needed, "")] + [(needed, wanted) for wanted in requirement.extras]
    return {name for name, _ in seen}


def link_distributions(names: Set[str], folder: str) -> None:
    """Links the top-level files and folders of distributions `names` into `folder`."""
    site = sysconfig.get_paths()["purelib"]
    os.makedirs(folder)
    for dist in metadata.distributions():
        if _normal(dist.metadata["Name"] or "") not in names:
            continue
        for file in dist.files or []:
            top = file.parts[0]
            source, target = os.path.join(site, top), os.path.join(folder, top)
            if os.path.exists(source) and not os.path.lexists(target):
                os.symlink(source, target)


def make_venv(path: str, packages_folder: str = "", wheel: str = "") -> str:
    """A venv of the base interpreter, with `packages_folder` on its path and `wheel` installed
    (with its console scripts, without dependencies); its python."""
    _run([sys.executable, "-m", "venv", "--without-pip", path])
    python = os.path.join(path, "bin", "python")
    if packages_folder:
        site = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        with open(os.path.join(site.stdout.strip(), "linked.pth"), "w") as pth:
            pth.write(packages_folder + "\n")
    if wheel:
        pip = [sys.executable, "-m", "pip", "--python", python, "install", "-q"]
        _run(pip + ["--no-deps", "--no-index", wheel])
    return python


def table(times: Dict[str, float], baseline: str) -> str:
    rows = [
        f"| {name} | {seconds:.3f} | {seconds / times[baseline]:.2f}x |"
        for name, seconds in times.items()
    ]
    return "| environment | median s | against the first |\n|---|---|---|\n" + "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        wheel = str(build_project_wheel(Path(work)))
        bare = make_venv(os.path.join(work, "bare"))
        with_wheel = make_venv(os.path.join(work, "with-wheel"), wheel=wheel)
        everything = requirement_closure(
            dist.metadata["Name"] or "" for dist in metadata.distributions()
        ) - {"elmo-plugin"}
        link_distributions(everything, os.path.join(work, "all"))
        link_distributions(requirement_closure(CORE), os.path.join(work, "core"))
        plugin = make_venv(os.path.join(work, "plugin"), os.path.join(work, "all"), wheel)
        core = make_venv(os.path.join(work, "core-venv"), os.path.join(work, "core"), wheel)
        _run([plugin, "-c", "import allennlp, elmo_plugin.allennlp"])
        _run([core, "-c", "import elmo_plugin"])
        allennlp = subprocess.run(
            [core, "-c", "import allennlp"], env=CLEAN_ENVIRONMENT, capture_output=True
        )
        if allennlp.returncode == 0:
            raise SystemExit("the core's environment can import allennlp")

        def command(python: str, *arguments: str):
            return lambda: _run([python, *arguments], cwd=work)

        def embed_help(python: str):
            return command(os.path.join(os.path.dirname(python), "elmo-embed"), "--help")

        print(f"{cpu_model()}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
        startup = {"without the package": command(bare, "-c", "pass")}
        startup["with the wheel installed"] = command(with_wheel, "-c", "pass")
        for run in startup.values():
            run()
        print("\n## `python -c pass`\n")
        print(table(medians_of(alternating_times(startup, args.repeats)), "without the package"))
        embed = {"core alone": embed_help(core), "plugin installed": embed_help(plugin)}
        for run in embed.values():
            run()
        print("\n## `elmo-embed --help`\n")
        repeats = max(3, args.repeats // 4)
        print(table(medians_of(alternating_times(embed, repeats)), "core alone"))


if __name__ == "__main__":
    main()
