"""Benchmark: one run under Shadow's own defaults and under the options the
project sets (runner/network/shadow_config.py's ``experimental``), on the
same generated network, with the CPU each takes (user and system) and
whether every host's logs come out byte for byte the same.

An option belongs in the project's set only if it cuts CPU and changes no
simulated byte: the "hosts' logs" column checks the second on every row.
Settings alternate, ``--repeat`` times each, so that a machine's drift
falls on both. Rows go to the "Shadow's options" section of
``bench/results.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from runner.bench.results_table import add_section_rows, code_commit, machine
from runner.console import TERMINAL
from runner.layout import SHADOW_DATA, Layout
from runner.network.backends import SHADOW

SECTION = "## Shadow's options"
INTRO = (
    "`make bench-shadow-options` runs one run of an experiment under Shadow's\n"
    "defaults and under the options the project sets (`experimental` in\n"
    "`shadow.yaml`), alternating, on the same network, one Shadow thread; with\n"
    "*runs at once* above 1, as many copies side by side (the load of an\n"
    "experiment's runs on every core), the first one's figures given. CPU is\n"
    "Shadow's and every process it ran (user + system); *hosts' logs*: whether\n"
    "every host's logs are byte for byte those of the first run under the defaults.\n"
)
HEADER = (
    "| date | machine | experiment | run | runs at once | options | wall (s) | user (s) "
    "| system (s) | CPU (s) | hosts' logs | shadow | code |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
)
DEFAULTS = "Shadow's defaults"
PROJECT = "the project's"


@dataclass(frozen=True)
class Measured:
    options: str
    wall_s: float
    user_s: float
    system_s: float
    logs: str  # a digest of every host's logs, the run's own path taken out


def _logs_digest(run_dir: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted((run_dir / SHADOW_DATA / "hosts").rglob("*.stdout")):
        digest.update(str(path.relative_to(run_dir)).encode())
        digest.update(path.read_bytes().replace(str(run_dir).encode(), b"<run>"))
    return digest.hexdigest()


def _copy(template: Path, run_dir: Path, options: str) -> None:
    """A copy of ``template`` in ``run_dir`` whose shadow.yaml has ``options``."""
    if run_dir.exists():
        shutil.rmtree(run_dir)
    shutil.copytree(template, run_dir, ignore=shutil.ignore_patterns(SHADOW_DATA))
    config_path = run_dir / "shadow.yaml"
    config = yaml.safe_load(config_path.read_text())
    if options == DEFAULTS:
        config.pop("experimental", None)
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))


def _simulate(template: Path, work: Path, options: str, shadow: str, at_once: int) -> Measured:
    """``at_once`` Shadow runs of copies of ``template`` under ``options``,
    side by side; the first one's figures (the others load the machine as
    an experiment's other runs would)."""
    name = options.replace(" ", "-").replace("'", "")
    run_dirs = [work / f"{name}-{i}" for i in range(at_once)]
    procs = []
    started = time.monotonic()
    for run_dir in run_dirs:
        _copy(template, run_dir, options)
        with (
            (run_dir / "shadow.log").open("w") as out,
            (run_dir / "shadow.stderr").open("w") as err,
        ):
            procs.append(
                subprocess.Popen(
                    [shadow, "--parallelism", "1", "--use-cpu-pinning", "false", "shadow.yaml"],
                    cwd=run_dir,
                    stdout=out,
                    stderr=err,
                )
            )
    usages = {}
    for proc in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{options}: shadow failed (its shadow.stderr says why)")
        usages[proc.pid] = (usage, time.monotonic() - started)
    usage, wall = usages[procs[0].pid]
    measured = Measured(options, wall, usage.ru_utime, usage.ru_stime, _logs_digest(run_dirs[0]))
    for run_dir in run_dirs:
        shutil.rmtree(run_dir)
    return measured


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options: its own command line, and ``runner bench shadow-options``."""
    parser.add_argument("spec")
    parser.add_argument("--out", default="bench/results.md")
    parser.add_argument("--variant", help="the run's variant (default: the spec's first)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=2, help="runs under each setting")
    parser.add_argument(
        "--at-once",
        type=int,
        default=1,
        help="copies of each run side by side (the load of an experiment's runs at once)",
    )


def run(args: argparse.Namespace) -> int:
    # Imported here: the command line lists this benchmark without loading them.
    from runner.execute.run_all import resolve_tools
    from runner.experiments import load_spec
    from runner.network.generate import generate_run

    spec = load_spec(Path(args.spec))
    variant = spec.variant(args.variant) if args.variant else spec.variants[0]
    tools = resolve_tools(spec, SHADOW)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    found: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="shadow-options-") as tmp:
        layout = Layout(Path(tmp) / "results", spec.name)
        template = generate_run(spec, variant, args.seed, layout, tools, sys.argv, 1, SHADOW)
        for _ in range(args.repeat):
            for options in (DEFAULTS, PROJECT):
                found.append(
                    _simulate(template, Path(tmp), options, tools.paths["shadow"], args.at_once)
                )
                TERMINAL.err(str(found[-1]))
    reference = found[0].logs
    rows = [
        f"| {today} | {machine()} | {spec.name} | {variant.name}/seed-{args.seed} "
        f"| {args.at_once} | {m.options} | {m.wall_s:.1f} | {m.user_s:.1f} | {m.system_s:.1f} "
        f"| {m.user_s + m.system_s:.1f} | {'identical' if m.logs == reference else 'differ'} "
        f"| {tools.versions.get('shadow', '')} | {code_commit()} |\n"
        for m in found
    ]
    add_section_rows(Path(args.out), rows, SECTION, INTRO, HEADER)
    TERMINAL.out(("".join(rows)).rstrip("\n"))
    return 0 if all(m.logs == reference for m in found) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.bench.shadow_options", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
