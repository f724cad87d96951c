"""Benchmark: where a simulated run's CPU goes. For every complete Shadow
run of an experiment in a results root: the CPU of generating its network,
Shadow's own threads (user and system), tor by host role, tgen and
oniontrace, and what no sample saw (runner.execute.child_cpu); beside it,
where a local run of the same variant and seed exists (real processes,
no simulator), its processes' CPU and Shadow's total over it: how far a
simulation is from the floor of the programs' own work.

Rows go to the "Cost profile" section of ``bench/results.md``, labelled
(``--label``) so that settings can be set side by side.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from runner.bench.results_table import add_section_rows, code_commit, machine
from runner.console import TERMINAL
from runner.layout import Layout
from runner.manifest import RunRecord, read_run_if_any
from runner.network.backends import backend_named

SECTION = "## Cost profile"
INTRO = (
    "`make bench-profile EXP=<name>` runs an experiment's runs under Shadow\n"
    "(reusing complete ones) and splits each run's CPU seconds: generating\n"
    "its network, Shadow's own threads (user, system), each program by host\n"
    "role, sampled every second from /proc, and the last second's work no\n"
    "sample saw. `native`: the same variant and seed on the local backend\n"
    "(real processes, no link emulation, a real-time bootstrap): its\n"
    "processes' CPU before the traffic plus their CPU during it, scaled to\n"
    "the simulated run's length of traffic; `ratio`: the Shadow run's CPU\n"
    "over it. All figures CPU seconds (user plus system).\n"
)
COLUMNS = (
    "date",
    "machine",
    "experiment",
    "label",
    "run",
    "generate",
    "shadow user",
    "shadow system",
    "tor authorities",
    "tor relays",
    "tor clients",
    "tgen",
    "oniontrace",
    "not sampled",
    "total",
    "native",
    "ratio",
    "code",
)
HEADER = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"


def program_seconds(record: RunRecord) -> dict[str, float]:
    """The sampled CPU seconds of a run's programs, tor split by host role."""
    found: dict[str, float] = {}
    programs = record.cpu_profile.get("programs_s") or {}
    for host, used in programs.items():
        role = record.hosts.get(host, {}).get("role", "")
        for program, seconds in used.items():
            if program == "tor":
                kind = "authorities" if role == "authority" else "relays"
                program = f"tor {'clients' if role == 'client' else kind}"
            found[program] = found.get(program, 0.0) + float(seconds)
    return found


def native_seconds(native: Layout | None, record: RunRecord) -> float | None:
    """What the same variant and seed's programs need as real processes:
    the local run's CPU before its traffic, plus its traffic's CPU scaled
    to the simulated run's length of traffic (a local run's traffic runs
    in real time, often shorter)."""
    if native is None:
        return None
    local = read_run_if_any(native.run_dir(record.variant, record.seed))
    if local is None:
        return None
    whole = local.cpu_phases_s.get("simulate")
    if not local.complete or whole is None or local.measure_s <= 0:
        return None
    traffic = sum(s for used in local.process_cpu_s.values() for s in used.values())
    return whole - traffic + traffic * record.measure_s / local.measure_s


def profile_row(record: RunRecord, native_s: float | None) -> list[str]:
    """One run's cells from ``generate`` to ``ratio``."""
    profile = record.cpu_profile
    phases = record.cpu_phases_s
    generate, simulate = phases.get("generate", 0.0), phases["simulate"]
    programs = program_seconds(record)
    cells = [generate, profile["shadow_user_s"], profile["shadow_system_s"]]
    cells += [programs.get(p, 0.0) for p in COLUMNS[8:13]]
    cells += [profile["not_sampled_s"], generate + simulate]
    text = [f"{float(c):.1f}" for c in cells]
    if native_s is None or native_s <= 0:
        return [*text, "–", "–"]
    return [*text, f"{native_s:.1f}", f"{simulate / native_s:.0f}x"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec")
    parser.add_argument("--results", default="results")
    parser.add_argument("--native", help="results root of local runs of the same spec")
    parser.add_argument("--label", default="–", help="what the rows were run with")
    parser.add_argument("--out", default="bench/results.md")


def run(args: argparse.Namespace) -> int:
    # Imported here: the command line lists this benchmark without loading it.
    from runner.experiments import load_spec

    spec = load_spec(Path(args.spec))
    # Each backend's runs land apart (results/<name>, results/<name>-local).
    layout = Layout(Path(args.results), backend_named("shadow").experiment_name(spec.name))
    local_name = backend_named("local").experiment_name(spec.name)
    native = Layout(Path(args.native), local_name) if args.native else None
    today, where, code = datetime.now(UTC).strftime("%Y-%m-%d"), machine(), code_commit()
    rows = []
    for variant in spec.variants:
        for seed in spec.seeds:
            record = read_run_if_any(layout.run_dir(variant.name, seed))
            if (
                record is None
                or not record.complete
                or record.backend != "shadow"
                or not record.cpu_profile
            ):
                continue
            cells = profile_row(record, native_seconds(native, record))
            head = [today, where, spec.name, args.label, f"{variant.name}/seed-{seed}"]
            rows.append("| " + " | ".join([*head, *cells, code]) + " |\n")
    if not rows:
        where_runs = layout.experiment_dir
        TERMINAL.err(f"{where_runs}: no complete Shadow run with a CPU profile")
        return 1
    add_section_rows(Path(args.out), rows, SECTION, INTRO, HEADER)
    TERMINAL.out(f"{len(rows)} runs profiled; appended to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.bench.profile", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
