"""Run every (variant, seed) of an experiment: generate, then simulate.

Several runs go at once up to ``jobs``; a run that fails is recorded as
failed in its manifest and reported, and the others go on. Runs whose
manifest says complete are skipped, so re-running finishes what is missing.
"""

from __future__ import annotations

import os
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from runner.errors import RunError
from runner.generate import PATCHED_TOR, Tools, generate_run
from runner.layout import Layout
from runner.manifest import (
    STATUS_COMPLETE,
    STATUS_FAILED,
    read_manifest,
    run_status,
    write_manifest,
)
from runner.prereqs import GENERATION_PROGRAMS, SIMULATION_PROGRAMS, require
from runner.progress import Progress
from runner.simulate import run_shadow
from runner.spec import Spec
from runner.torbuild import load_source, patched_tor


@dataclass(frozen=True)
class RunOutcome:
    variant: str
    seed: int
    status: str  # complete, failed, skipped
    run_dir: Path
    error: str | None = None


def resolve_tools(spec: Spec | None = None) -> Tools:
    """The programs on this machine; the patched tor too if ``spec`` uses it."""
    found = require((*GENERATION_PROGRAMS, *SIMULATION_PROGRAMS))
    paths = {name: f.path for name, f in found.items() if f.path}
    versions = {name: f.version for name, f in found.items()}
    if spec is not None and any(v.tor == "patched" for v in spec.variants):
        source = load_source()
        paths[PATCHED_TOR] = str(patched_tor(source))
        versions[PATCHED_TOR] = f"{source.debian_version} + series {source.key}"
    return Tools(paths=paths, versions=versions)


def _one_run(
    spec: Spec,
    variant_name: str,
    seed: int,
    layout: Layout,
    tools: Tools,
    command: list[str],
    parallelism: int,
    progress: Progress,
) -> RunOutcome:
    label = f"{variant_name}/seed-{seed}"
    run_dir = layout.run_dir(variant_name, seed)
    try:
        progress.phase(label, "generate")
        generate_run(spec, spec.variant(variant_name), seed, layout, tools, command, parallelism)
        progress.phase(label, "simulate")
        started = time.monotonic()
        run_shadow(
            run_dir,
            tools.paths["shadow"],
            parallelism,
            on_progress=lambda pct: progress.percent(label, pct),
        )
        manifest = read_manifest(run_dir)
        manifest["phases"]["simulate_s"] = round(time.monotonic() - started, 3)
        manifest["status"] = STATUS_COMPLETE
        write_manifest(run_dir, manifest)
        progress.finish(label, ok=True)
        return RunOutcome(variant_name, seed, STATUS_COMPLETE, run_dir)
    except (RunError, OSError, ValueError) as exc:
        message = str(exc)
        if not isinstance(exc, RunError):
            message += "\n" + traceback.format_exc(limit=4)
        if (run_dir / "manifest.json").is_file():
            manifest = read_manifest(run_dir)
            manifest["status"] = STATUS_FAILED
            manifest["error"] = message
            write_manifest(run_dir, manifest)
        progress.finish(label, ok=False, message=message.splitlines()[0])
        return RunOutcome(variant_name, seed, STATUS_FAILED, run_dir, message)


def run_experiment(
    spec: Spec,
    layout: Layout,
    command: list[str],
    jobs: int | None = None,
    tools: Tools | None = None,
) -> list[RunOutcome]:
    """Generate and simulate every run not yet complete; return every outcome."""
    tools = tools or resolve_tools(spec)
    cores = os.cpu_count() or 1
    # Two Shadow threads per run beat two one-thread runs on 2 cores (see
    # bench/results.md), so by default each run gets two cores.
    jobs = max(1, jobs or cores // 2)
    parallelism = max(1, cores // jobs)
    pairs = [(v.name, s) for s in spec.seeds for v in spec.variants]
    outcomes: list[RunOutcome] = []
    todo = []
    for variant, seed in pairs:
        run_dir = layout.run_dir(variant, seed)
        if run_status(run_dir) == STATUS_COMPLETE:
            outcomes.append(RunOutcome(variant, seed, "skipped", run_dir))
        else:
            todo.append((variant, seed))
    if outcomes:
        print(f"{len(outcomes)} of {len(pairs)} runs already complete; skipping them")
    with Progress(len(todo)) as progress, ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [
            pool.submit(
                _one_run, spec, variant, seed, layout, tools, command, parallelism, progress
            )
            for variant, seed in todo
        ]
        outcomes += [f.result() for f in futures]
    return outcomes
