# zeus-bench: two commands on a fresh machine, `make reproduce` and `make test`.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
CORES  ?= $(shell nproc 2>/dev/null || echo 2)
# Not -q: pip shows what it collects and a progress bar while it downloads (installs take minutes).
PIP_FLAGS ?= --disable-pip-version-check --progress-bar on

.PHONY: help reproduce test test-slurm lint bench bench-peer golden clean venv lock shell docs docs-serve

help:
	@echo "make reproduce  - create .venv if missing, install, run the main Snakemake workflow"
	@echo "make test       - create .venv if missing, install with test extras, run the test suite"
	@echo "make shell      - a shell with .venv active (zeus-bench, snakemake on PATH); exit to leave"
	@echo "make docs       - build the documentation site strict into site/ (installs the extra docs)"
	@echo "make test-slurm - (root) start a one-node SLURM cluster, run the tests marked slurm, stop it"
	@echo "make lint       - ruff (format check + lint) and mypy"
	@echo "make bench      - benchmarks: simulator (tries/s, jobs/s, whole process), arena, make reproduce in a fresh clone"
	@echo "make bench-peer - the same, plus the original Zeus simulator timed side by side (builds .venv-peer)"
	@echo "make golden     - rerun the original Zeus simulator: benchmarks/golden/ and results/reference/"
	@echo "make lock       - rewrite requirements.lock (exact versions of the core install) in a fresh venv"
	@echo "make mutate     - sampled mutation testing of the rules (cosmic-ray; not in CI): kill rate per module"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(PIP_FLAGS) --upgrade pip

# Exact versions of every package of the core install, with which the committed results/ were
# made: `make reproduce` (and `make test`, for the packages it shares) installs them (constraints).
LOCK ?= requirements.lock

# Stamps record what was installed; they are redone when pyproject.toml or the lock changes.
$(VENV)/.core: $(BIN)/python pyproject.toml $(LOCK)
	$(BIN)/pip install $(PIP_FLAGS) -c $(LOCK) -e .
	touch $@

# Every extra the tests exercise (the notebooks' widgets, the Lightning callback), so that CI
# skips nothing a user runs.
$(VENV)/.test: $(BIN)/python pyproject.toml $(LOCK)
	$(BIN)/pip install $(PIP_FLAGS) -c $(LOCK) -e '.[test,workloads,lightning,notebooks]'
	touch $@ $(VENV)/.core

venv: $(VENV)/.core

# A shell with the venv active, for the commands of the README (`source .venv/bin/activate` does the same).
shell: $(VENV)/.core
	@echo "zeus-bench: a shell with $(VENV) active; exit to leave"
	@VIRTUAL_ENV="$(CURDIR)/$(VENV)" PATH="$(CURDIR)/$(BIN):$$PATH" $${SHELL:-/bin/bash}

$(VENV)/.docs: $(BIN)/python pyproject.toml $(LOCK)
	$(BIN)/pip install $(PIP_FLAGS) -c $(LOCK) -e '.[docs]'
	touch $@ $(VENV)/.core

docs: $(VENV)/.docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(VENV)/.docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

reproduce: $(VENV)/.core
	$(BIN)/snakemake --cores $(CORES)

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
	$(BIN)/python benchmarks/bench_arena.py
	$(BIN)/python benchmarks/bench_reproduce.py

# The original simulator (PyPI zeus==0.16.0, its _legacy code, with the pinned packages it imports)
# in one side venv, built on request and shared by bench-peer and golden.
PEER ?= .venv-peer
$(PEER)/bin/python: benchmarks/golden/requirements.txt
	$(PYTHON) -m venv $(PEER)
	$(PEER)/bin/pip install $(PIP_FLAGS) --no-deps zeus==0.16.0
	$(PEER)/bin/pip install $(PIP_FLAGS) -r benchmarks/golden/requirements.txt
	touch $@

bench-peer: $(VENV)/.core $(PEER)/bin/python
	$(BIN)/python benchmarks/bench_simulate.py --peer $(PEER)/bin/python

ZEUS_TRACE_DIR ?= ../shared/traces/zeus-nsdi23
golden: $(PEER)/bin/python
	PYTHONPATH=$(CURDIR) $(PEER)/bin/python benchmarks/golden/run_original.py \
		--traces $(ZEUS_TRACE_DIR) --reference results/reference/original_simulator.csv

# The lock is resolved in a throwaway venv holding the core install only (pip's resolver).
lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install $(PIP_FLAGS) --upgrade pip
	.venv-lock/bin/pip install $(PIP_FLAGS) -e .
	( echo "# Exact versions of the core install (make lock; pip freeze). make reproduce installs with it."; \
	  .venv-lock/bin/pip freeze --exclude-editable --all | grep -Ev '^(pip|setuptools|wheel)==' ) > $(LOCK)
	rm -rf .venv-lock

# Mutation testing (benchmarks/mutate/modules.toml; docs/testing.md): not part of `make test` or CI.
# MUTATE_ARGS, e.g. "--module store --sample 40 --jobs 2".
MUTATE_ARGS ?=
$(VENV)/.mutate: $(BIN)/python pyproject.toml
	$(BIN)/pip install $(PIP_FLAGS) -c $(LOCK) -e '.[test,workloads,lightning,notebooks,mutate]'
	touch $@ $(VENV)/.test $(VENV)/.core

.PHONY: mutate
mutate: $(VENV)/.mutate
	$(BIN)/python benchmarks/mutate/run.py --jobs 2 $(MUTATE_ARGS)

clean:
	rm -rf .snakemake logs results/sim
