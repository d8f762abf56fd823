"""Where the tests find the project, defined once: every test and test helper takes its paths
outside tests/ from here (scripts/make_profile_archive.py too, through tests/profile_archives.py).
Configs name their data relative to the project root, so the tests also run from there
(tests/conftest.py)."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).absolute().parents[1]
FIXTURES = PROJECT_ROOT / "fixtures"
TRAINING_CONFIGS = PROJECT_ROOT / "training_configs"
# ../shared/data beside the project: the full data sets; tests that need it skip without it.
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
# The Python of a TensorFlow venv apart from the project's, for the tests marked `tf_reference`
# (tests/tensorflow_reference.py); they skip without it.
TF_PYTHON_VARIABLE = "ELMO_TF_PYTHON"
