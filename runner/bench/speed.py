"""Benchmark: time and memory of each phase of an experiment, on this machine.

Runs the experiment from scratch in a temporary results directory, one run
at a time (so times and peak memory belong to one simulation), and appends
a row per run to ``bench/results.md``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from runner.bench.results_table import machine
from runner.console import TERMINAL
from runner.layout import Layout
from runner.network.backends import BACKENDS

HEADER = (
    "| date | machine | experiment | backend | run | generate (s) | bootstrap (s) "
    "| simulate (s) | collect (s) | peak RSS of a child (MiB) | versions |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|\n"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options: its own command line, and ``runner bench speed``."""
    parser.add_argument("spec")
    parser.add_argument("--out", default="bench/results.md")
    parser.add_argument("--backend", choices=sorted(BACKENDS), default=None)


def run(args: argparse.Namespace) -> int:
    # Imported here: the command line lists this benchmark without loading them.
    from runner.execute.run_all import resolve_tools, run_experiment
    from runner.experiments import TABLES, load_spec
    from runner.manifest import read_run
    from runner.tables.collect import collect
    from runner.tools.prereqs import default_backend

    spec = load_spec(Path(args.spec))
    backend = BACKENDS[args.backend] if args.backend else default_backend()
    tools = resolve_tools(spec, backend)
    versions = ", ".join(f"{k} {v}" for k, v in sorted(tools.versions.items()) if v)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        layout = Layout(Path(tmp), spec.name)
        started = time.monotonic()
        outcomes = run_experiment(spec, layout, sys.argv, jobs=1, tools=tools, backend=backend)
        if any(o.status != "complete" for o in outcomes):
            TERMINAL.err("a run failed; no benchmark recorded")
            return 1
        collect(spec, layout, TABLES)
        total = time.monotonic() - started
        # ru_maxrss of children is the largest single descendant (Shadow and its tors).
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        today = datetime.now(UTC).strftime("%Y-%m-%d")
        for o in outcomes:
            record = read_run(o.run_dir)
            # Shadow's bootstrap is simulated time inside "simulate"; the local
            # backend's is wall time until every client's tor has bootstrapped.
            bootstrap_s = record.phase_s("bootstrap")
            bootstrap = "–" if bootstrap_s is None else f"{bootstrap_s:.1f}"
            generate_s, simulate_s, collect_s = (
                record.phase_s(name) or 0.0 for name in ("generate", "simulate", "collect")
            )
            rows.append(
                f"| {today} | {machine()} | {spec.name} | {backend.name} "
                f"| {o.variant}/seed-{o.seed} | {generate_s:.1f} | {bootstrap} "
                f"| {simulate_s:.1f} | {collect_s:.2f} | {peak_mib:.0f} "
                f"| {versions} |\n"
            )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    existing = out.read_text() if out.is_file() else "# Benchmarks\n\n" + HEADER
    out.write_text(existing + "".join(rows))
    TERMINAL.out(f"{len(rows)} runs in {total:.0f} s; appended to {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.bench.speed", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
