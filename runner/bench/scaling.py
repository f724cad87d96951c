"""Benchmark: the same experiment with 1, 2, 4, ... runs at once, with Shadow's
own CPU pinning (every run pins over every CPU) and with each run given CPUs
of its own, and with pinning off.

Each setting runs the experiment from scratch in a temporary directory with
the default threads per run (the cores shared out among the runs at once) and
adds a row to the "Runs at once" section of ``bench/results.md``: wall time,
runs per hour, and the mean simulate phase of a run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from runner.bench.results_table import add_section_rows, machine
from runner.console import TERMINAL
from runner.execute.placement import OFF, OWN_CPUS, PINNING_MODES, SHARED, usable_cpus
from runner.layout import Layout
from runner.manifest import read_run
from runner.network.backends import SHADOW
from runner.spec.model import Spec

SECTION = "## Runs at once"
INTRO = (
    "`make bench` runs the experiment from scratch at each number of runs at once\n"
    "(`--jobs`), threads per run being the cores shared out among them, with\n"
    "Shadow's own pinning (`shared`: every Shadow pins over every CPU), with a\n"
    "CPU set of its own per run (`own-cpus`, the default) and with pinning `off`.\n"
)
HEADER = (
    "| date | machine | experiment | runs | runs at once | Shadow threads a run "
    "| pinning | wall (s) | runs per hour | mean simulate of a run (s) | shadow |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|\n"
)


def job_counts(cores: int) -> list[int]:
    """1, 2, 4, ... up to one run per core."""
    counts = [1]
    while counts[-1] * 2 <= cores:
        counts.append(counts[-1] * 2)
    if counts[-1] != cores:
        counts.append(cores)
    return counts


def only_variants(spec: Spec, names: list[str]) -> Spec:
    """``spec`` with only the variants named; ValueError naming any unknown."""
    known = [v.name for v in spec.variants]
    if unknown := [n for n in names if n not in known]:
        raise ValueError(
            f"{spec.name}: no variant {', '.join(unknown)} (its variants: {', '.join(known)})"
        )
    return replace(spec, variants=tuple(v for v in spec.variants if v.name in names))


def add_rows(out: Path, rows: list[str]) -> None:
    """Append ``rows`` to the "Runs at once" table."""
    add_section_rows(out, rows, SECTION, INTRO, HEADER)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options: its own command line, and ``runner bench scaling``."""
    parser.add_argument("spec")
    parser.add_argument("--out", default="bench/results.md")
    parser.add_argument("--jobs", help="runs at once, comma-separated (default: 1, 2, 4, ...)")
    parser.add_argument(
        "--pinning",
        default=f"{SHARED},{OWN_CPUS},{OFF}",
        help=f"modes, comma-separated, of {', '.join(PINNING_MODES)}",
    )
    parser.add_argument(
        "--seeds", type=int, help="seeds to run (default: the spec's; more for more runs)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="Shadow threads a run (default: the cores shared out among the runs at once; "
        "1 compares N runs at once on N cores with one run alone on one)",
    )
    parser.add_argument(
        "--variants",
        help="variants to run, comma-separated (default: all; one variant and one seed "
        "time a run alone, the wall time N runs at once are held to)",
    )


def run(args: argparse.Namespace) -> int:
    # Imported here: the command line lists this benchmark without loading them.
    from runner.execute.run_all import resolve_tools, run_experiment
    from runner.experiments import load_spec

    spec = load_spec(Path(args.spec))
    if args.seeds:
        spec = replace(spec, seeds=tuple(range(1, args.seeds + 1)))
    if args.variants:
        spec = only_variants(spec, args.variants.split(","))
    cores = len(usable_cpus())
    counts = [int(j) for j in args.jobs.split(",")] if args.jobs else job_counts(cores)
    modes = args.pinning.split(",")
    tools = resolve_tools(spec, SHADOW)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    runs = len(spec.variants) * len(spec.seeds)
    for jobs in counts:
        for mode in modes if jobs > 1 else [OWN_CPUS]:  # one run alone: the modes agree
            with tempfile.TemporaryDirectory(prefix="scaling-") as tmp:
                layout = Layout(Path(tmp), spec.name)
                started = time.monotonic()
                outcomes = run_experiment(
                    spec,
                    layout,
                    sys.argv,
                    jobs=jobs,
                    threads=args.threads,
                    tools=tools,
                    backend=SHADOW,
                    pinning=mode,
                )
                wall = time.monotonic() - started
                if any(o.status != "complete" for o in outcomes):
                    TERMINAL.err(f"jobs {jobs}, {mode}: a run failed; no row")
                    return 1
                simulate = [read_run(o.run_dir).phase_s("simulate") or 0.0 for o in outcomes]
                threads = read_run(outcomes[0].run_dir).placement["threads"]
            row = (
                f"| {today} | {machine()} | {spec.name} | {runs} | {jobs} | {threads} | {mode} "
                f"| {wall:.0f} | {runs * 3600 / wall:.0f} | {sum(simulate) / len(simulate):.0f} "
                f"| {tools.versions.get('shadow', '')} |\n"
            )
            add_rows(Path(args.out), [row])
            TERMINAL.out((row).rstrip("\n"))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.bench.scaling", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
