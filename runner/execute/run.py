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
from runner.execute.local import run as local_run
from runner.execute.local.procs import kill_all
from runner.execute.local.run import run_local
from runner.execute.manifest import (
    STATUS_COMPLETE,
    STATUS_FAILED,
    read_manifest,
    run_status,
    write_manifest,
)
from runner.execute.progress import Progress
from runner.execute.simulate import run_shadow
from runner.layout import Layout
from runner.network.backends import LOCAL, SHADOW, Backend
from runner.network.generate import PATCHED_TOR, Tools, generate_run
from runner.spec.model import Spec
from runner.tools.prereqs import GENERATION_PROGRAMS, SIMULATION_PROGRAMS, find, require
from runner.tools.torbuild import load_source, patched_tor


@dataclass(frozen=True)
class RunOutcome:
    variant: str
    seed: int
    status: str  # complete, failed, skipped
    run_dir: Path
    error: str | None = None


def run_backend(run_dir: Path) -> str | None:
    try:
        return str(read_manifest(run_dir).get("backend"))
    except (OSError, ValueError):
        return None


def default_backend() -> Backend:
    """Shadow when it is installed, otherwise real processes on this machine."""
    return SHADOW if find("shadow").ok else LOCAL


def runs_at_once(backend: Backend, jobs: int | None = None) -> int:
    """How many runs go at once. Two Shadow threads per run beat two one-thread
    runs on 2 cores (see bench/results.md), so by default each run gets two
    cores. Local networks share this machine's addresses and ports: one at a time."""
    return 1 if backend.local else max(1, jobs or (os.cpu_count() or 1) // 2)


def resolve_tools(spec: Spec | None = None, backend: Backend = SHADOW) -> Tools:
    """The programs on this machine; the patched tor too if ``spec`` uses it.

    Shadow needs tgen and oniontrace; the local backend uses tgen when it is
    present and its built-in driver when not, and always its own event logger
    (local control ports need a cookie that oniontrace cannot send)."""
    found = require(
        GENERATION_PROGRAMS if backend.local else (*GENERATION_PROGRAMS, *SIMULATION_PROGRAMS)
    )
    if backend.local and (tgen := find("tgen")).ok:
        found["tgen"] = tgen
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
    backend: Backend,
) -> RunOutcome:
    label = f"{variant_name}/seed-{seed}"
    run_dir = layout.run_dir(variant_name, seed)
    variant = spec.variant(variant_name)
    try:
        progress.phase(label, "generate")
        generate_run(spec, variant, seed, layout, tools, command, parallelism, backend)
        progress.phase(label, "simulate")
        started = time.monotonic()
        on_progress = lambda pct: progress.percent(label, pct)  # noqa: E731
        if backend.local:
            manifest = read_manifest(run_dir)
            phases = run_local(
                run_dir,
                manifest,
                tools.for_variant(variant),
                spec.duration.local_measure,
                on_progress,
            )
            manifest["phases"] |= phases
        else:
            run_shadow(run_dir, tools.paths["shadow"], parallelism, on_progress)
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
    backend: Backend | None = None,
) -> list[RunOutcome]:
    """Generate and simulate every run not yet complete; return every outcome."""
    backend = backend or default_backend()
    tools = tools or resolve_tools(spec, backend)
    jobs = runs_at_once(backend, jobs)
    parallelism = max(1, (os.cpu_count() or 1) // jobs)
    pairs = [(v.name, s) for s in spec.seeds for v in spec.variants]
    outcomes: list[RunOutcome] = []
    todo = []
    for variant, seed in pairs:
        run_dir = layout.run_dir(variant, seed)
        if run_status(run_dir) == STATUS_COMPLETE and run_backend(run_dir) == backend.name:
            outcomes.append(RunOutcome(variant, seed, "skipped", run_dir))
        else:
            todo.append((variant, seed))
    if outcomes:
        print(f"{len(outcomes)} of {len(pairs)} runs already complete; skipping them")
    print(f"backend: {backend.name}")
    with Progress(len(todo)) as progress, ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [
            pool.submit(
                _one_run,
                spec,
                variant,
                seed,
                layout,
                tools,
                command,
                parallelism,
                progress,
                backend,
            )
            for variant, seed in todo
        ]
        try:
            outcomes += [f.result() for f in futures]
        except KeyboardInterrupt:
            # Stop what is running; each run then records itself as failed.
            for future in futures:
                future.cancel()
            local_run.cancel.set()
            kill_all()
            raise
    return outcomes
