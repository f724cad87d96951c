"""Benchmark: writing an experiment's report (`runner compare`) from its
collected tables, on this machine: wall time, CPU time and peak memory.

The report is written where `runner compare` writes it
(``results/<experiment>/report``), and a row is added to the "Report
writing" section of ``bench/results.md``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from runner.bench.results_table import add_section_rows, code_commit, machine
from runner.console import TERMINAL
from runner.layout import Layout
from runner.manifest import STATUS_MISSING

SECTION = "## Report writing"
INTRO = (
    "`make bench-report EXP=<name>` writes the experiment's report from the\n"
    "tables its runs were collected into, as `runner compare` does; the\n"
    "intervals' bootstraps take most of the time.\n"
)
HEADER = (
    "| date | machine | experiment | runs | transfers | wall (s) | CPU (s) "
    "| peak RSS (MiB) | code |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options: its own command line, and ``runner bench report``."""
    parser.add_argument("spec")
    parser.add_argument("--results", default="results")
    parser.add_argument("--out", default="bench/results.md")


def run(args: argparse.Namespace) -> int:
    # Imported here: the command line lists this benchmark without loading them.
    from runner.analyses.runs import read_spec_runs
    from runner.experiments import ANALYSES, load_spec
    from runner.planning.seed_rounds import narrowed_line, seeds_in_use
    from runner.report.compare import compare

    spec = load_spec(Path(args.spec))
    layout = Layout(Path(args.results), spec.name)
    written, spec = spec, seeds_in_use(spec, layout)  # as `runner compare` sees it
    narrowed = narrowed_line(written, spec, layout)
    if narrowed:
        TERMINAL.out(narrowed)
    if not layout.transfers_csv.is_file():
        TERMINAL.err(
            f"{layout.transfers_csv}: no collected transfers; run "
            f"`make experiment EXP={spec.name}` first"
        )
        return 1
    with layout.transfers_csv.open() as table:
        transfers = sum(1 for _ in table) - 1
    # The runs that were made, as collect recorded them.
    runs = sum(1 for r in read_spec_runs(spec, layout) if r.status != STATUS_MISSING)
    started, cpu_started = time.monotonic(), time.process_time()
    compare(spec, layout, ANALYSES)
    wall, cpu = time.monotonic() - started, time.process_time() - cpu_started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    row = (
        f"| {today} | {machine()} | {spec.name} | {runs} | {transfers} | {wall:.1f} "
        f"| {cpu:.1f} | {peak_mib:.0f} | {code_commit()} |\n"
    )
    add_section_rows(Path(args.out), [row], SECTION, INTRO, HEADER)
    TERMINAL.out(f"report of {runs} runs written in {wall:.1f} s; appended to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.bench.report", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
