"""Benchmark: the CPU an experiment's runs took, as each recorded it
(its run directory here or the run store), for the design the spec now
asks (a run of another identity is not counted): per run and per
simulated second, the cheapest and the dearest variant. A row is added to
the "CPU per run" section of ``bench/results.md``; nothing is simulated.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from runner.bench.results_table import add_section_rows, code_commit
from runner.console import TERMINAL

if TYPE_CHECKING:  # the command line lists this benchmark without loading tables
    from runner.spec.model import Spec
    from runner.tables.runs import RunRow

SECTION = "## CPU per run"
INTRO = (
    "`make bench-runs EXP=<name>` reads the CPU each complete run of the\n"
    "experiment's current design recorded (its run directory or the run\n"
    "store): the mean per run, the range over its variants' means and CPU\n"
    "per simulated second (bootstrap and traffic). Runs made on other\n"
    "machines count as they recorded; the machine column is theirs.\n"
)
HEADER = (
    "| date | experiment | machine | runs | variants | mean CPU a run (s) | median (s) "
    "| cheapest variant (s) | dearest variant (s) | CPU per simulated s | code |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|\n"
)


@dataclass(frozen=True)
class RunsCpu:
    """What an experiment's complete runs recorded of their CPU."""

    runs: int
    variants: int
    mean_s: float
    median_s: float
    cheapest: tuple[str, float]  # variant, its mean
    dearest: tuple[str, float]
    per_simulated_s: float


def runs_cpu(spec: Spec, rows: Sequence[RunRow]) -> RunsCpu | None:
    """The CPU figures of ``rows``' complete runs that recorded theirs;
    None where none did."""
    # Imported here: the command line lists this benchmark without loading them.
    from runner.workflow.campaign import cpu_per_variant, simulated_seconds

    done = [r for r in rows if r.complete and r.cpu_s is not None]
    if not done:
        return None
    cpus = [r.cpu_s or 0.0 for r in done]
    means = {v: cpu for v, cpu in cpu_per_variant(done).items() if v}
    simulated = sum(simulated_seconds(spec, r.variant) for r in done)
    return RunsCpu(
        runs=len(done),
        variants=len(means),
        mean_s=statistics.fmean(cpus),
        median_s=statistics.median(cpus),
        cheapest=min(means.items(), key=lambda kv: (kv[1], kv[0])),
        dearest=max(means.items(), key=lambda kv: (kv[1], kv[0])),
        per_simulated_s=sum(cpus) / simulated,
    )


def _machines(rows: Sequence[RunRow]) -> str:
    """The machines the runs recorded, by their CPUs (or "–")."""
    found = sorted({r.machine_cpus for r in rows if r.complete and r.machine_cpus})
    return ", ".join(f"{cpus} CPUs" for cpus in found) or "–"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options: ``runner bench runs``."""
    parser.add_argument("spec")
    parser.add_argument("--results", default="results")
    parser.add_argument("--out", default="bench/results.md")


def run(args: argparse.Namespace) -> int:
    # Imported here: the command line lists this benchmark without loading them.
    from runner.tables.sources import run_sources
    from runner.workflow import Experiment

    exp = Experiment.load(args.spec, args.results, None)
    spec = exp.analysed_spec()
    rows = [s.row for s in run_sources(spec, exp.layout)]
    found = runs_cpu(spec, rows)
    if found is None:
        TERMINAL.err(f"{spec.name}: no complete run of the current design recorded its CPU")
        return 1
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    (cheap, cheap_s), (dear, dear_s) = found.cheapest, found.dearest
    row = (
        f"| {today} | {spec.name} | {_machines(rows)} | {found.runs} | {found.variants} "
        f"| {found.mean_s:.0f} | {found.median_s:.0f} | {cheap} {cheap_s:.0f} "
        f"| {dear} {dear_s:.0f} | {found.per_simulated_s:.3f} | {code_commit()} |\n"
    )
    add_section_rows(Path(args.out), [row], SECTION, INTRO, HEADER)
    TERMINAL.out(
        f"{spec.name}: {found.runs} runs, {found.mean_s:.0f} CPU-s a run on average; "
        f"appended to {args.out}"
    )
    return 0
