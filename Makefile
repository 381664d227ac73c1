# zeus-bench: two commands on a fresh machine, `make reproduce` and `make test`.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
CORES  ?= $(shell nproc 2>/dev/null || echo 2)
PIP_FLAGS ?= -q --disable-pip-version-check

.PHONY: help reproduce test lint bench bench-peer clean venv

help:
	@echo "make reproduce  - create .venv if missing, install, run the main Snakemake workflow"
	@echo "make test       - create .venv if missing, install with test extras, run the test suite"
	@echo "make lint       - ruff (format check + lint) and mypy"
	@echo "make bench      - simulator benchmark (tries/s and jobs/s per policy, whole-process time and peak memory)"
	@echo "make bench-peer - the same, plus the original Zeus simulator timed side by side (builds .venv-peer)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(PIP_FLAGS) --upgrade pip

# Stamps record what was installed; they are redone when pyproject.toml changes.
$(VENV)/.core: $(BIN)/python pyproject.toml
	$(BIN)/pip install $(PIP_FLAGS) -e .
	touch $@

$(VENV)/.test: $(BIN)/python pyproject.toml
	$(BIN)/pip install $(PIP_FLAGS) -e '.[test,workloads]'
	touch $@ $(VENV)/.core

venv: $(VENV)/.core

reproduce: $(VENV)/.core
	$(BIN)/snakemake --cores $(CORES) --printshellcmds

test: $(VENV)/.test
	$(BIN)/python -m pytest

lint: $(VENV)/.test
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(VENV)/.core
	$(BIN)/python benchmarks/bench_simulate.py

# The original simulator (PyPI zeus==0.16.0, its _legacy code) in a side venv, built on request.
PEER ?= .venv-peer
$(PEER)/bin/python:
	$(PYTHON) -m venv $(PEER)
	$(PEER)/bin/pip install $(PIP_FLAGS) --no-deps zeus==0.16.0
	$(PEER)/bin/pip install $(PIP_FLAGS) numpy pandas scikit-learn

bench-peer: $(VENV)/.core $(PEER)/bin/python
	$(BIN)/python benchmarks/bench_simulate.py --peer $(PEER)/bin/python

clean:
	rm -rf .snakemake logs results/sim
