"""Random bytes and truncated fixtures given to every reader and to the bilm-tf loader give a
sensible result or a clear error (a ConfigurationError naming the file), never a
raw crash."""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elmo_plugin.elmo import load_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from tests.paths import FIXTURES
from tests.tasks.test_reader_robustness import READERS, fixture_bytes, read

FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", 15)),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
CLEAR_ERRORS = (ConfigurationError,)


def mangled(original: bytes):
    truncated = st.integers(0, len(original)).map(lambda n: original[:n])
    flipped = st.tuples(
        st.integers(0, max(len(original) - 1, 0)), st.binary(min_size=1, max_size=8)
    ).map(lambda change: original[: change[0]] + change[1] + original[change[0] + len(change[1]) :])
    return st.one_of(st.binary(max_size=200), truncated, flipped)


def check_clear(call, path):
    try:
        call()
    except CLEAR_ERRORS as error:
        assert os.path.basename(str(path)) in str(error), error


@pytest.mark.parametrize("name", sorted(READERS))
def test_readers_on_mangled_fixtures(tmp_path, name):
    @FUZZ
    @given(content=mangled(fixture_bytes(name)))
    def run(content):
        path = tmp_path / "fuzzed.data"
        path.write_bytes(content)
        check_clear(lambda: read(name, path), path)

    run()


@pytest.mark.parametrize("which", ["options.json", "lm_weights.hdf5"])
def test_bilm_tf_loader_on_mangled_files(tmp_path, which):
    with open(os.path.join(FIXTURES, "elmo", which), "rb") as handle:
        original = handle.read()

    @FUZZ
    @given(content=mangled(original))
    def run(content):
        path = tmp_path / which
        path.write_bytes(content)
        options = (
            str(path) if which == "options.json" else os.path.join(FIXTURES, "elmo", "options.json")
        )
        weights = (
            str(path)
            if which != "options.json"
            else os.path.join(FIXTURES, "elmo", "lm_weights.hdf5")
        )
        check_clear(lambda: load_bilm(options, weights), path)

    run()
