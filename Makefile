# Two install profiles (README "Install"):
#   PROFILE=current        (default) Python 3.12, today's torch, allennlp 2.10.1 without its stale pins
#   PROFILE=allennlp-2.10  Python 3.10, torch 1.12, AllenNLP 2.10.1's own pins
# Every target creates the profile's virtual environment first when it is missing (or stale).
PROFILE ?= current
ifeq ($(PROFILE),current)
  PYTHON_VERSION := 3.12
  VENV ?= .venv
else ifeq ($(PROFILE),allennlp-2.10)
  PYTHON_VERSION := 3.10
  VENV ?= .venv-allennlp-2.10
else
  $(error PROFILE must be "current" or "allennlp-2.10", not "$(PROFILE)")
endif
# pyenv's interpreter of that version where pyenv has one, else python3.X on the PATH.
PYTHON ?= $(shell PYENV_VERSION=$(PYTHON_VERSION) pyenv which python 2>/dev/null || command -v python$(PYTHON_VERSION))
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# allennlp-models goes here, off the default import path: AllenNLP imports every installed
# default plugin into every command, and allennlp-models' NarrativeQA tools then call
# nltk.download. Tests that need it add this folder themselves (tests/conftest.py).
ALLENNLP_MODELS_DIR := $(VENV)/allennlp-models

.PHONY: demo test test-fast test-all lint venv clean bench-embed tables

$(STAMP): setup.cfg setup.py pyproject.toml requirements/$(PROFILE).txt requirements/$(PROFILE).in
	@test -n "$(PYTHON)" && "$(PYTHON)" -c 'import sys; sys.exit(sys.version_info[:2] != tuple(map(int, "$(PYTHON_VERSION)".split("."))))' \
	  || { echo "make: PROFILE=$(PROFILE) needs Python $(PYTHON_VERSION), and none was found" \
	       "(tried: pyenv's $(PYTHON_VERSION), python$(PYTHON_VERSION) on the PATH)." \
	       "Install it (pyenv install $(PYTHON_VERSION)) or name it: make PYTHON=/path/to/python$(PYTHON_VERSION)" >&2; exit 1; }
	@test -x $(BIN)/python || "$(PYTHON)" -m venv $(VENV)
	@echo "make: installing the $(PROFILE) profile into $(VENV) with scripts/install_profile.sh" \
	  "(about 4 min the first time, pip working quietly; then only when setup.cfg or requirements/ change)"
	bash scripts/install_profile.sh $(PROFILE) $(BIN)/python $(ALLENNLP_MODELS_DIR)
	@touch $(STAMP)
	@echo "make: $(VENV) is ready"

venv: $(STAMP)

# The main job on the bundled default: embed bundled sentences with the bundled biLM.
demo: $(STAMP)
	VENV=$(VENV) bash scripts/demo.sh

# The suite on both cores (pytest-xdist, a file's tests on one worker so that its module
# fixtures are built once), closing with the number of tests run and the 20 slowest.
WORKERS ?= 2
PYTEST := $(BIN)/python -m pytest -q -n $(WORKERS) --dist loadfile --durations=20
test: $(STAMP)
	$(PYTEST) tests

# The inner loop, at most 5 minutes on 2 cores: every test but those that train, build a wheel
# or install into a fresh environment (marked `slow`); CI runs them all.
test-fast: $(STAMP)
	$(PYTEST) -m "not slow" tests

# The gates: formatting (black) and lint (flake8) on the whole tree (the library, the benchmarks,
# the experiments, the scripts and the tests); types (mypy) on the library, the benchmarks, the
# experiments and the tests. Configured in pyproject.toml and setup.cfg.
# The tools are pinned in the current profile only.
ifeq ($(PROFILE),current)
lint: $(STAMP)
	$(BIN)/black --check elmo_plugin benchmarks experiments scripts tests
	$(BIN)/flake8 elmo_plugin benchmarks experiments scripts tests
	$(BIN)/mypy elmo_plugin benchmarks experiments tests
else
lint:
	@echo "make lint: the lint tools are in the current profile only (PROFILE=current)" >&2; exit 2
endif

# Both profiles, as CI runs them.
test-all:
	$(MAKE) test PROFILE=current
	$(MAKE) test PROFILE=allennlp-2.10

# The paper's tables in miniature (docs/paper_tables.md), from ../shared/data and the shipped
# biLM: many hours on 2 cores. The runs train in runs/paper_tables/ (not kept); each finished
# run leaves its record in its task's scores file in experiments/results/paper_tables/, which
# git keeps: a later job reads a finished run back instead of training it, so a job cut off goes
# on where it stopped and a fresh clone renders every table at once. The last line renders the
# results in README.md, docs/ and the model card from the records (experiments/render_docs.py).
RECORDS := experiments/results/paper_tables
tables: $(STAMP)
	$(BIN)/python experiments/paper_tables.py table1 table2 table3 sample_efficiency convergence finetuned --extra-seeds 1 2 --records $(RECORDS)
	$(BIN)/python experiments/paper_tables.py figure2 --figure docs/elmo_layer_weights.png --records $(RECORDS)
	$(BIN)/python experiments/render_docs.py

bench-embed: $(STAMP)
	$(BIN)/python benchmarks/embedding_speed.py

clean:
	rm -rf .venv .venv-allennlp-2.10 *.egg-info
