"""The plugin changes AllenNLP only as `elmo_plugin.allennlp.framework` lists: on import, the
config loader's rows and nothing else; in the `allennlp` command, the command's rows besides."""

import json
import subprocess
import sys

import pytest

from elmo_plugin.allennlp.framework import COMMAND, CONFIG_LOADER, REPLACEMENTS
from tests.paths import PROJECT_ROOT

# Trains, builds a wheel or runs AllenNLP in a process of its own: `make test-fast` leaves it out.
pytestmark = pytest.mark.slow

# Every function object of every loaded module of AllenNLP and of the libraries it calls that
# we could replace, before and after importing the plugin: the names whose object changed.
CHANGED = """
import json, os, sys, types
import _jsonnet, cached_path._cached_path
import allennlp.commands, allennlp.models, allennlp.training, allennlp.data, allennlp.predictors
import allennlp.commands.train, allennlp.commands.predict, allennlp.commands.evaluate
FRAMEWORK = ("allennlp", "_jsonnet", "cached_path")

def functions():
    found = {"sys.excepthook": id(sys.excepthook)}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in FRAMEWORK:
            continue
        for attribute, value in list(vars(module).items()):
            if callable(value):
                found[f"{name}.{attribute}"] = id(value)
    return found

before, environ, finders = functions(), dict(os.environ), list(sys.meta_path)
sys.argv = sys.argv[1:]  # the process's command line as the test names it
import elmo_plugin
after = functions()
assert dict(os.environ) == environ and sys.meta_path == finders
print(json.dumps(sorted(name for name in before if after.get(name) != before[name])))
"""


def _changed(argv0: str) -> list:
    result = subprocess.run(
        [sys.executable, "-c", CHANGED, argv0], cwd=PROJECT_ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


def _rows(*when: str) -> list:
    return sorted(f"{row.module}.{row.name}" for row in REPLACEMENTS if row.when in when)


def test_importing_the_plugin_changes_only_the_config_loader():
    assert _changed("-c") == _rows(CONFIG_LOADER)


def test_the_allennlp_command_also_makes_the_command_changes_and_nothing_else():
    assert _changed("/venv/bin/allennlp") == _rows(CONFIG_LOADER, COMMAND)


@pytest.mark.parametrize("row", REPLACEMENTS, ids=lambda row: f"{row.module}.{row.name}")
def test_every_row_names_a_public_function_and_says_why(row):
    assert not row.name.startswith("_") and len(row.why) > 40
