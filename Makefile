# Every target creates the virtual environment first when it is missing (or stale).
PYTHON ?= $(shell pyenv which python 2>/dev/null || command -v python3.10)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test venv clean bench-embed tables

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

# The paper's tables in miniature (README "The paper's tables in miniature"), from ../shared/data
# and the shipped biLM: about 2 h 30 min on 2 cores. Finished runs in runs/ are reused, so an
# interrupted job resumes where it stopped.
tables: $(STAMP)
	$(BIN)/python experiments/paper_tables.py table1 table2 table3 --extra-seeds 1 2
	$(BIN)/python experiments/paper_tables.py sample_efficiency figure2 --figure docs/elmo_layer_weights.png
	bash experiments/snli_domain_adaptation.sh

bench-embed: $(STAMP)
	$(BIN)/python benchmarks/embedding_speed.py

clean:
	rm -rf $(VENV) *.egg-info
