# Experiment framework for Tor performance research under Shadow.
# `make help` lists the targets.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXP ?= ci-small
JOBS ?=
RESULTS ?= results
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBIAN_PACKAGES := $(shell grep -v '^\#' runner/debian-packages.txt)
JOBS_ARG := $(if $(JOBS),--jobs $(JOBS),) $(if $(BACKEND),--backend $(BACKEND),) \
	$(if $(FORCE),--force,) $(if $(EXECUTOR),--executor $(EXECUTOR),) \
	$(if $(PINNING),--pinning $(PINNING),)
BASELINE ?= results/baselines/ci-small$(if $(filter local,$(BACKEND)),-local,).json

.PHONY: help setup check test lint typecheck unit regress-local experiment regress baseline bench bench-scaling tor tor-test clean

help:
	@echo "make setup                  install Debian packages and the Python environment"
	@echo "make check                  report which prerequisites (tor, Shadow, tgen, ...) are present"
	@echo "make test                   lint, type-check, the tests, and the local ci-small regression"
	@echo "make unit                   the tests only (Shadow tests skip, saying why, without it)"
	@echo "make tor                    build the patched tor (pinned source + tor-patches/series), cached"
	@echo "make tor-test               run tor's unit tests in the patched build"
	@echo "make experiment EXP=<name>  run, collect and compare configs/<name>.yaml [JOBS=n]"
	@echo "                            [BACKEND=shadow|local] (default: shadow if installed)"
	@echo "                            [FORCE=1]: run even if the size check says it won't fit"
	@echo "                            [EXECUTOR=tcp://host:8786 | slurm:cores=4,...]: run on a"
	@echo "                            Dask cluster or Slurm (README, 'Clusters') [PINNING=...]"
	@echo "make regress                re-run ci-small and check it against results/baselines/"
	@echo "make baseline               re-write results/baselines/ci-small.json from a fresh run"
	@echo "make bench                  time each phase of ci-small, one run at a time -> bench/results.md"
	@echo "                            [BACKEND=local]: includes the network's bootstrap time"
	@echo "                            then (Shadow) the runs-at-once table: make bench-scaling"
	@echo "                            [JOBS=1,2,4] [SEEDS=n]"

setup:
	$(SUDO) apt-get update -q
	$(SUDO) tor-patches/enable-deb-src.sh
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(DEBIAN_PACKAGES)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,cluster]'

check:
	$(PY) -m runner check

lint:
	$(PY) -m ruff check runner topologies workloads tests
	$(PY) -m ruff format --check runner topologies workloads tests

typecheck:
	$(PY) -m mypy

unit:
	$(PY) -m pytest -ra

# The local-backend regression runs ci-small as real tor processes (about 12
# minutes on 2 cores); `make unit` alone takes about 6.
test: lint typecheck unit regress-local

regress-local:
	$(MAKE) regress BACKEND=local

tor:
	$(PY) -m runner.tools.torbuild build $(if $(JOBS),--jobs $(JOBS),)

tor-test: tor
	$(PY) -m runner.tools.torbuild test

experiment:
	$(PY) -m runner experiment configs/$(EXP).yaml --results $(RESULTS) $(JOBS_ARG)

regress:
	$(PY) -m runner regress configs/ci-small.yaml --results $(RESULTS) $(JOBS_ARG) \
		--baseline $(BASELINE)

baseline:
	$(PY) -m runner regress configs/ci-small.yaml --results $(RESULTS) $(JOBS_ARG) \
		--baseline $(BASELINE) --write

bench:
	$(PY) -m runner.tools.bench configs/$(EXP).yaml --out bench/results.md $(if $(BACKEND),--backend $(BACKEND),)
	$(if $(filter local,$(BACKEND)),,$(MAKE) bench-scaling)

bench-scaling:
	$(PY) -m runner.tools.scaling configs/$(EXP).yaml --out bench/results.md \
		$(if $(JOBS),--jobs $(JOBS),) $(if $(SEEDS),--seeds $(SEEDS),)

clean:
	rm -rf $(RESULTS)/ci-small
