# Every target creates the virtual environment first when it is missing (or stale).
PYTHON ?= $(shell pyenv which python 2>/dev/null || command -v python3.10)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test venv clean bench-embed

$(STAMP): setup.cfg setup.py constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c constraints.txt --upgrade pip setuptools wheel
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

# The main job on the bundled default: embed bundled sentences with the bundled biLM.
demo: $(STAMP)
	bash scripts/demo.sh

test: $(STAMP)
	$(BIN)/python -m pytest -q tests

bench-embed: $(STAMP)
	$(BIN)/python benchmarks/embedding_speed.py

clean:
	rm -rf $(VENV) *.egg-info
