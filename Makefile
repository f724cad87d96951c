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

.PHONY: help setup tools check test test-sim lint typecheck unit regress-local unit-fast generate plan experiment claims campaign regress baseline bench bench-report bench-runs bench-profile bench-scaling bench-shadow-options tor tor-test tor-staged tor-staged-test clean

help:
	@echo "make setup                  install Debian packages and the Python environment"
	@echo "make tools                  build the tested Shadow, tgen and oniontrace into a cache"
	@echo "                            (Shadow: about 15 minutes on 2 cores, Rust 1.85 or later)"
	@echo "                            and install tornettools, tgentools, oniontracetools"
	@echo "                            into the venv; cached, so quick once done [JOBS=n]"
	@echo "make check                  report which prerequisites (tor, Shadow, tgen, ...) are present"
	@echo "                            and which backends (shadow, local) can run"
	@echo "make test                   lint, type-check, the tests but the simulations (one short"
	@echo "                            Shadow smoke test where Shadow is installed), and the local"
	@echo "                            ci-small regression: the fast path, whatever is installed"
	@echo "make test-sim               the simulation tests: Shadow runs, clusters, local tor"
	@echo "                            networks; each says what it starts (those needing Shadow"
	@echo "                            skip without it, saying why)"
	@echo "make unit                   make test's tests only"
	@echo "make unit-fast              the tests that start no network, cluster or simulation"
	@echo "make tor                    build the patched tor (pinned source + tor-patches/series), cached"
	@echo "                            (several minutes once: 7 to 12 on 2 cores; it names its build.log)"
	@echo "make tor-test               run tor's unit tests in the patched build"
	@echo "make tor-staged             build the staged tor (the patched series + tor-patches/staged/"
	@echo "                            series: patches that run before they join the series), cached"
	@echo "make tor-staged-test        run tor's unit tests in the staged build"
	@echo "make generate EXP=<name>    write every run's network (keys, configs) without running it"
	@echo "make experiment EXP=<name>  run, collect and compare configs/<name>.yaml [JOBS=n]"
	@echo "                            [BACKEND=shadow|local] (default: shadow if installed)"
	@echo "                            [FORCE=1]: run even if the size check says it won't fit"
	@echo "                            [EXECUTOR=tcp://host:8786 | slurm:cores=4,...]: run on a"
	@echo "                            Dask cluster or Slurm (docs/clusters.md) [PINNING=...]"
	@echo "make plan EXP=<name>        from a pilot's runs: the seeds, CPU-hours and wall time a"
	@echo "                            decisive answer needs, per design [PILOT=n: run seeds 1..n]"
	@echo "make claims                 write docs/claims.md and its plot docs/claims.svg: per config,"
	@echo "                            the published claim each hypothesis tests, the paper's"
	@echo "                            number beside the project's latest answers, each config with"
	@echo "                            stored runs analysed first"
	@echo "                            (a fresh clone: from results/store/ alone; an experiment with"
	@echo "                            no answers keeps its section as it was) [RESULTS=dir]"
	@echo "make campaign BUDGET=<CPU-hours> [SPECS='configs/a.yaml ...']  run the seeds that bring"
	@echo "                            the most open confirmatory claims nearest a verdict per"
	@echo "                            CPU-hour, each stored as it completes, stopping before the"
	@echo "                            budget (docs/store.md) [JOBS=n] [BACKEND=...] [EXECUTOR=...]"
	@echo "make regress                ci-small against results/baselines/: reuses its complete runs,"
	@echo "                            re-runs only missing or stale ones, then checks the baseline"
	@echo "make baseline               re-write results/baselines/ci-small.json from ci-small's runs"
	@echo "                            (complete ones reused, as make regress does)"
	@echo "make bench                  time each phase of ci-small, one run at a time -> bench/results.md"
	@echo "                            [BACKEND=local]: includes the network's bootstrap time"
	@echo "                            then (Shadow) the runs-at-once table: make bench-scaling"
	@echo "                            [JOBS=1,2,4] [SEEDS=n] [THREADS=1] [VARIANTS=a,b]"
	@echo "make bench-shadow-options EXP=<name>  one run's CPU under Shadow's defaults and the project's options"
	@echo "make bench-report EXP=<name> time writing the report of an experiment's collected results"
	@echo "make bench-runs EXP=<name>   the CPU each run of its current design recorded (results and store)"
	@echo "make bench-profile EXP=<name> [NATIVE=<results root of local runs>] [LABEL=...]"
	@echo "                            run it under Shadow; where each run's CPU went -> bench/results.md"

# A dpkg run that was interrupted (a killed install, a full disk) blocks
# every apt-get until `dpkg --configure -a` finishes it; apt-get waits up to
# 5 minutes for another one's lock (unattended-upgrades on a fresh machine).
APT_GET := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300

setup:
	@if [ -n "$$(ls -A /var/lib/dpkg/updates 2>/dev/null)" ] || [ -n "$$(dpkg --audit 2>/dev/null)" ]; then \
		echo "dpkg was interrupted: finishing its work first"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive dpkg --configure -a && \
		$(APT_GET) install -f -y -q; \
	fi
	$(APT_GET) update -q
	$(SUDO) tor-patches/enable-deb-src.sh
	$(APT_GET) install -y -q $(DEBIAN_PACKAGES)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,cluster]'

# Shadow, tgen and oniontrace at their tested tags (runner/tools/upstream.py),
# built into ~/.cache/tornet-experiments/tools (or $$TORNET_TOOLS_ROOT) once;
# the Python tools into the venv.
tools:
	$(PY) -m runner tools build $(if $(JOBS),--jobs $(JOBS),)
	$(PY) -m runner tools python

check:
	$(PY) -m runner check

lint:
	$(PY) -m ruff check runner topologies workloads tests
	$(PY) -m ruff format --check runner topologies workloads tests

typecheck:
	$(PY) -m mypy

# The tests of make test: all but those marked simulation (Shadow runs,
# clusters, local tor networks), except the one Shadow smoke test. Both
# runs list their 15 slowest tests; a simulation says what it starts.
unit:
	$(PY) -m pytest -ra --durations=15 -m "not simulation or smoke"

test-sim:
	$(PY) -m pytest -ra --durations=15 -m simulation

# The tests that start no network, cluster or simulation: a few minutes.
unit-fast:
	$(PY) -m pytest -ra -m "not slow"

# make unit, then the local-backend regression runs ci-small's four networks
# at once as real tor processes. Measured times on 2 cores: README.md.
test: lint typecheck unit regress-local

regress-local:
	$(MAKE) regress BACKEND=local

tor:
	$(PY) -m runner tor build $(if $(JOBS),--jobs $(JOBS),)

tor-test: tor
	$(PY) -m runner tor test

tor-staged:
	$(PY) -m runner tor build --staged $(if $(JOBS),--jobs $(JOBS),)

tor-staged-test: tor-staged
	$(PY) -m runner tor test --staged

generate:
	$(PY) -m runner generate configs/$(EXP).yaml --results $(RESULTS) $(if $(BACKEND),--backend $(BACKEND),)

plan:
	$(PY) -m runner plan configs/$(EXP).yaml --results $(RESULTS) $(if $(PILOT),--pilot $(PILOT),) $(JOBS_ARG)

experiment:
	$(PY) -m runner experiment configs/$(EXP).yaml --results $(RESULTS) $(JOBS_ARG)

claims:
	$(PY) -m runner claims --results $(RESULTS)

campaign:
	@test -n "$(BUDGET)" || { echo "make campaign needs BUDGET=<CPU-hours>"; exit 2; }
	$(PY) -m runner campaign --budget $(BUDGET) --results $(RESULTS) $(JOBS_ARG) $(SPECS)

regress:
	$(PY) -m runner regress configs/ci-small.yaml --results $(RESULTS) $(JOBS_ARG) \
		--baseline $(BASELINE)

baseline:
	$(PY) -m runner regress configs/ci-small.yaml --results $(RESULTS) $(JOBS_ARG) \
		--baseline $(BASELINE) --write

bench:
	$(PY) -m runner bench speed configs/$(EXP).yaml --out bench/results.md $(if $(BACKEND),--backend $(BACKEND),)
	$(if $(filter local,$(BACKEND)),,$(MAKE) bench-scaling)

bench-runs:
	$(PY) -m runner bench runs configs/$(EXP).yaml --results $(RESULTS) --out bench/results.md

bench-report:
	$(PY) -m runner bench report configs/$(EXP).yaml --results $(RESULTS) --out bench/results.md

bench-shadow-options:
	$(PY) -m runner bench shadow-options configs/$(EXP).yaml --out bench/results.md \
		$(if $(REPEAT),--repeat $(REPEAT),) $(if $(AT_ONCE),--at-once $(AT_ONCE),)

bench-profile:
	$(PY) -m runner run configs/$(EXP).yaml --results $(RESULTS) $(JOBS_ARG)
	$(PY) -m runner bench profile configs/$(EXP).yaml --results $(RESULTS) --out bench/results.md \
		$(if $(NATIVE),--native $(NATIVE),) $(if $(LABEL),--label "$(LABEL)",)

bench-scaling:
	$(PY) -m runner bench scaling configs/$(EXP).yaml --out bench/results.md \
		$(if $(JOBS),--jobs $(JOBS),) $(if $(SEEDS),--seeds $(SEEDS),) \
		$(if $(THREADS),--threads $(THREADS),) $(if $(VARIANTS),--variants $(VARIANTS),)

clean:
	rm -rf $(RESULTS)/ci-small
