"""Run every (variant, seed) of an experiment: generate, then simulate.

Several runs go at once, each on CPUs of its own (``runner.execute.cpus``),
in this process or on a cluster (``runner.execute.cluster``); a run that
fails is recorded as failed in its manifest and reported, and the others go
on. Runs whose manifest says complete are skipped, so re-running finishes
what is missing.
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from runner.errors import RunError
from runner.execute.cpus import OFF, OWN_CPUS, CpuSlots, Placement, choose_placement
from runner.execute.local import run as local_run
from runner.execute.local.netns import run_in_namespace
from runner.execute.local.procs import kill_all
from runner.execute.local.run import machine_slot, run_local
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
from runner.network.backends import LOCAL, NAMESPACE, SHADOW, Backend
from runner.network.capacity import experiment_size, machine_memory_mib
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


def _patched_version(spec: Spec) -> str | None:
    """The patched tor a run of ``spec`` would use, as manifests record it."""
    if not any(v.tor == "patched" for v in spec.variants):
        return None
    source = load_source()
    return f"{source.debian_version} + series {source.key}"


def _made_otherwise(run_dir: Path, spec: Spec, patched: str | None) -> bool:
    """Whether a complete run came from another version of the spec or
    another patched tor than a run made now would."""
    manifest = read_manifest(run_dir)
    if manifest.get("spec", {}).get("sha256") != spec.sha256:
        return True
    made = manifest.get("versions", {}).get(PATCHED_TOR)
    return patched is not None and made is not None and made != patched


class RunReporter(Protocol):
    """Where a run says what it is doing (a Progress here, an event on a worker)."""

    def phase(self, run: str, phase: str) -> None: ...

    def percent(self, run: str, percent: int) -> None: ...


class Executor(Protocol):
    """Somewhere else to run the tasks: a Dask cluster, Slurm."""

    def describe(self) -> str: ...

    def run(self, tasks: list[RunTask], progress: Progress) -> list[RunOutcome]: ...


@dataclass(frozen=True)
class RunTask:
    """Everything one (variant, seed) needs, wherever it runs."""

    spec: Spec
    variant: str
    seed: int
    layout: Layout
    command: tuple[str, ...]
    backend: Backend

    @property
    def label(self) -> str:
        return f"{self.variant}/seed-{self.seed}"


def run_one(
    task: RunTask,
    tools: Tools,
    threads: int,
    reporter: RunReporter,
    cpus: frozenset[int] | None = None,
    pin: bool = True,
) -> RunOutcome:
    """Generate and simulate one run; a failure is recorded in its manifest
    and returned, never raised."""
    spec, label, backend = task.spec, task.label, task.backend
    run_dir = task.layout.run_dir(task.variant, task.seed)
    variant = spec.variant(task.variant)
    try:
        reporter.phase(label, "generate")
        generate_run(
            spec, variant, task.seed, task.layout, tools, list(task.command), threads, backend
        )
        reporter.phase(label, "simulate")
        started = time.monotonic()
        on_progress = lambda pct: reporter.percent(label, pct)  # noqa: E731
        if backend.local:
            manifest = read_manifest(run_dir)
            # Every host at its own address where the machine gives the run a
            # network namespace (the manifest says which).
            runner = run_in_namespace if manifest.get("local_network") == NAMESPACE else run_local
            with machine_slot():
                phases = runner(
                    run_dir,
                    manifest,
                    tools.for_variant(variant),
                    spec.duration.local_measure,
                    on_progress,
                )
            manifest["phases"] |= phases
        else:
            run_shadow(run_dir, tools.paths["shadow"], threads, on_progress, cpus, pin)
            manifest = read_manifest(run_dir)
        manifest["phases"]["simulate_s"] = round(time.monotonic() - started, 3)
        manifest["placement"] = {
            "node": socket.gethostname(),
            "threads": threads,
            "cpus": sorted(cpus) if cpus else None,
            "cpu_pinning": pin,
            "slurm_job": os.environ.get("SLURM_JOB_ID"),
        }
        manifest["status"] = STATUS_COMPLETE
        write_manifest(run_dir, manifest)
        return RunOutcome(task.variant, task.seed, STATUS_COMPLETE, run_dir)
    except (RunError, OSError, ValueError) as exc:
        message = str(exc)
        if not isinstance(exc, RunError):
            message += "\n" + traceback.format_exc(limit=4)
        return record_failure(task, message)


def record_failure(task: RunTask, message: str) -> RunOutcome:
    run_dir = task.layout.run_dir(task.variant, task.seed)
    if (run_dir / "manifest.json").is_file():
        manifest = read_manifest(run_dir)
        manifest["status"] = STATUS_FAILED
        manifest["error"] = message
        write_manifest(run_dir, manifest)
    return RunOutcome(task.variant, task.seed, STATUS_FAILED, run_dir, message)


def finish(progress: Progress, outcome: RunOutcome) -> None:
    message = (outcome.error or "").splitlines()[0] if outcome.error else ""
    progress.finish(
        f"{outcome.variant}/seed-{outcome.seed}",
        ok=outcome.status == STATUS_COMPLETE,
        message=message,
    )


def _run_here(
    tasks: list[RunTask], tools: Tools, placement: Placement, progress: Progress
) -> list[RunOutcome]:
    """Run ``tasks`` in this process's pool, each on CPUs of its own."""
    slots = CpuSlots(placement)
    pin = placement.pinning != OFF

    def one(task: RunTask) -> RunOutcome:
        with slots.take() as cpus:
            outcome = run_one(task, tools, placement.threads, progress, cpus, pin)
        finish(progress, outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=placement.jobs) as pool:
        futures = [pool.submit(one, task) for task in tasks]
        try:
            return [f.result() for f in futures]
        except KeyboardInterrupt:
            # Stop what is running; each run then records itself as failed.
            for future in futures:
                future.cancel()
            local_run.cancel.set()
            kill_all()
            raise


def plan_placement(
    spec: Spec,
    backend: Backend,
    runs: int,
    jobs: int | None = None,
    threads: int | None = None,
    pinning: str = OWN_CPUS,
) -> Placement:
    """Local networks share this machine's addresses and ports: one at a time."""
    if backend.local:
        return choose_placement(runs, jobs=1, threads=1, pinning=OFF)
    size = experiment_size(spec, backend, 1)
    return choose_placement(
        runs,
        jobs=jobs,
        threads=threads,
        pinning=pinning,
        run_mib=size.run_mib,
        memory_mib=machine_memory_mib(),
        hosts=size.hosts,
    )


def run_experiment(
    spec: Spec,
    layout: Layout,
    command: list[str],
    jobs: int | None = None,
    tools: Tools | None = None,
    backend: Backend | None = None,
    threads: int | None = None,
    pinning: str = OWN_CPUS,
    executor: Executor | None = None,
) -> list[RunOutcome]:
    """Generate and simulate every run not yet complete; return every outcome.

    Runs go to this machine's pool unless ``executor`` sends them elsewhere
    (a Dask cluster, Slurm); either way a failed run is reported and the
    others go on, and complete runs are skipped."""
    backend = backend or default_backend()
    pairs = [(v.name, s) for s in spec.seeds for v in spec.variants]
    outcomes: list[RunOutcome] = []
    todo = []
    for variant, seed in pairs:
        run_dir = layout.run_dir(variant, seed)
        if run_status(run_dir) == STATUS_COMPLETE and run_backend(run_dir) == backend.name:
            outcomes.append(RunOutcome(variant, seed, "skipped", run_dir))
        else:
            todo.append(RunTask(spec, variant, seed, layout, tuple(command), backend))
    if outcomes:
        print(f"{len(outcomes)} of {len(pairs)} runs already complete; skipping them")
        patched = tools.versions.get(PATCHED_TOR) if tools else _patched_version(spec)
        others = [o for o in outcomes if _made_otherwise(o.run_dir, spec, patched)]
        if others:
            print(
                f"note: {len(others)} of them were made from another version of the spec "
                "or with another tor build (their manifests say which); they are kept: "
                "delete a run's directory to make it again"
            )
    print(f"backend: {backend.name}")
    with Progress(len(todo)) as progress:
        if executor is not None:
            print(f"executor: {executor.describe()}")
            outcomes += executor.run(todo, progress)
        else:
            placement = plan_placement(spec, backend, len(todo), jobs, threads, pinning)
            print(f"placement: {placement.describe()}")
            tools = tools or resolve_tools(spec, backend)
            outcomes += _run_here(todo, tools, placement, progress)
    return outcomes
