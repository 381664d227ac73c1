# zeus-bench: two commands on a fresh machine, `make reproduce` and `make test`.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
CORES  ?= $(shell nproc 2>/dev/null || echo 2)
PIP_FLAGS ?= -q --disable-pip-version-check

.PHONY: help reproduce test test-slurm lint bench clean venv

help:
	@echo "make reproduce  - create .venv if missing, install, run the main Snakemake workflow"
	@echo "make test       - create .venv if missing, install with test extras, run the test suite"
	@echo "make test-slurm - (root) start a one-node SLURM cluster, run the tests marked slurm, stop it"
	@echo "make lint       - ruff (format check + lint) and mypy"
	@echo "make bench      - simulator benchmark (recurrences per second, wall time of the grid)"

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

# Installs SLURM and munge with apt if missing, so it needs root (CI runs as root).
test-slurm: $(VENV)/.test
	tests/slurm/cluster.sh $(BIN)/python

lint: $(VENV)/.test
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(VENV)/.core
	$(BIN)/python benchmarks/bench_simulate.py

clean:
	rm -rf .snakemake logs results/sim
