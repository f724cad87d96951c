"""Run every (variant, seed) of an experiment: generate, then simulate.

Several runs go at once, each on CPUs of its own (``runner.execute.placement``),
in this process or on a cluster (``runner.execute.cluster``); a run that
fails is recorded as failed in its manifest and reported, and the others go
on. Runs whose manifest says complete are skipped, so re-running finishes
what is missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from runner.checks import runs_with_failures
from runner.console import TERMINAL, Console
from runner.errors import PrerequisiteError, RunError
from runner.execute.by_backend import execution
from runner.execute.cpu_claims import claimed_cpus, holder
from runner.execute.generation import Generate, Generators, in_this_process
from runner.execute.local import processes as local_run
from runner.execute.local.procs import allow_starts, kill_all
from runner.execute.placement import OFF, OWN_CPUS, CpuSlots, Placement, usable_cpus, without
from runner.execute.progress import Progress
from runner.layout import Layout, stale_path
from runner.manifest import (
    STATUS_COMPLETE,
    STATUS_FAILED,
    WhereRan,
    read_run_if_any,
    record_failed,
    record_simulated,
)
from runner.network.backends import SHADOW, Backend
from runner.network.generate import Tools
from runner.network.identity import changed_parts, spec_parts, tools_parts
from runner.network.tor_builds import TOOL_OF_BUILD
from runner.spec.model import Spec, Variant
from runner.tools.prereqs import default_backend, find, require, tor_libraries
from runner.tools.torbuild import load_source, patched_tor


@dataclass(frozen=True)
class RunOutcome:
    variant: str
    seed: int
    status: str  # complete, failed, skipped
    run_dir: Path
    error: str | None = None


def resolve_tools(spec: Spec | None = None, backend: Backend = SHADOW) -> Tools:
    """The programs on this machine that ``backend`` needs, and those it
    uses where present (Backend.programs, optional_programs); the patched
    and the staged tor too where ``spec``'s variants run them."""
    found = require(backend.programs)
    for name in backend.optional_programs:
        if (optional := find(name)).ok:
            found[name] = optional
    paths = {name: f.path for name, f in found.items() if f.path}
    versions = {name: f.version for name, f in found.items()}
    builds = {v.tor for v in spec.variants} if spec is not None else set()
    for build, tool in TOOL_OF_BUILD.items():
        if build in builds:
            source = load_source(staged=build == "staged")
            paths[tool] = str(patched_tor(source))
            versions[tool] = source.describe()
    return Tools(paths=paths, versions=versions | _tor_libraries(paths))


def _tor_libraries(paths: dict[str, str]) -> dict[str, str | None]:
    """The libraries the tors run with (a run's identity holds them: another
    OpenSSL draws other random numbers). A build's (the patched tor's, the
    staged tor's) are named apart only where they differ from the stock tor's."""
    stock = tor_libraries(paths["tor"]) if "tor" in paths else {}
    own: dict[str, str | None] = {}
    for tool in TOOL_OF_BUILD.values():
        built = tor_libraries(paths[tool]) if tool in paths else {}
        own |= {f"{name} ({tool})": v for name, v in built.items() if stock.get(name) != v}
    return {**stock, **own}


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
    # A complete run of another identity is in the run's place: it is moved
    # aside and removed once this one completes.
    replaces_stale: bool = False
    # The variant's measured consensus parameters on this seed
    # (runner.spec.measured), once its reference runs have been measured.
    measured: tuple[tuple[str, int], ...] = ()

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
    at_once: tuple[int, int] | None = None,
    generate: Generate = in_this_process,
) -> RunOutcome:
    """Generate and simulate one run; a failure is recorded in its manifest
    and returned, never raised. ``at_once``: the runs the pool beside it
    runs at once and the CPUs they share, recorded with its CPU time (the
    contention that time was measured under)."""
    spec, label, backend = task.spec, task.label, task.backend
    run_dir = task.layout.run_dir(task.variant, task.seed)
    variant = with_measured(spec.variant(task.variant), dict(task.measured))
    aside = stale_path(run_dir)
    if task.replaces_stale and run_dir.is_dir():
        if aside.exists():
            shutil.rmtree(aside)
        run_dir.rename(aside)
    try:
        reporter.phase(label, "generate")
        generated = generate(
            spec, variant, task.seed, task.layout, tools, list(task.command), threads, backend
        )
        ran = execution(backend).run(
            run_dir,
            tools.for_variant(variant),
            backend.measure(spec, variant.name),
            threads,
            lambda phase: reporter.phase(label, phase),
            lambda pct: reporter.percent(label, pct),
            cpus,
            pin,
        )
        record_simulated(
            run_dir,
            ran.record,
            generate_cpu_s=round(generated.cpu_s, 3),
            simulate_cpu_s=ran.cpu_s,
            # Work, not waiting: the time waited for the machine is kept apart.
            work_s=round(ran.work_s, 3),
            waited_s=round(ran.waited_s, 3),
            placement=_placement(threads, cpus, pin, at_once),
        )
        if aside.exists():
            shutil.rmtree(aside)
        return RunOutcome(task.variant, task.seed, STATUS_COMPLETE, run_dir)
    except (RunError, OSError, ValueError) as exc:
        message = str(exc)
        if not isinstance(exc, RunError):
            message += "\n" + traceback.format_exc(limit=4)
        return record_failure(task, message)


def with_measured(variant: Variant, measured: dict[str, int]) -> Variant:
    """``variant`` with its measured consensus parameters set; a variant
    that measures some cannot run without them."""
    missing = sorted(set(variant.consensus_from) - set(measured))
    if missing:
        raise RunError(f"{variant.name}: {', '.join(missing)} not measured yet")
    return replace(variant, consensus=variant.consensus | measured) if measured else variant


# Measures a variant's consensus parameters on a seed from the runs it
# refers to (runner.analyses.measured_params); raises RunError when it cannot.
MeasureParams = Callable[[Variant, int], dict[str, int]]


def _measure(
    tasks: list[RunTask],
    measure_params: MeasureParams | None,
    progress: Progress,
    outcomes: list[RunOutcome],
) -> list[RunTask]:
    """``tasks`` with their measured parameters; those that cannot be
    measured fail (their outcomes added to ``outcomes``) and are left out."""
    ready = []
    for task in tasks:
        try:
            if measure_params is None:
                raise RunError("this command cannot measure consensus_from")
            values = measure_params(task.spec.variant(task.variant), task.seed)
        except RunError as exc:
            outcome = record_failure(task, str(exc))
            finish(progress, outcome)
            outcomes.append(outcome)
            continue
        ready.append(replace(task, measured=tuple(sorted(values.items()))))
    return ready


def record_failure(task: RunTask, message: str) -> RunOutcome:
    run_dir = task.layout.run_dir(task.variant, task.seed)
    record_failed(run_dir, message)
    return RunOutcome(task.variant, task.seed, STATUS_FAILED, run_dir, message)


def _placement(
    threads: int, cpus: frozenset[int] | None, pin: bool, at_once: tuple[int, int] | None
) -> WhereRan:
    return WhereRan(
        node=socket.gethostname(),
        threads=threads,
        cpus=sorted(cpus) if cpus else None,
        cpu_pinning=pin,
        slurm_job=os.environ.get("SLURM_JOB_ID"),
        jobs=at_once[0] if at_once else None,
        machine_cpus=at_once[1] if at_once else None,
    )


def finish(progress: Progress, outcome: RunOutcome) -> None:
    message = (outcome.error or "").splitlines()[0] if outcome.error else ""
    progress.finish(
        f"{outcome.variant}/seed-{outcome.seed}",
        ok=outcome.status == STATUS_COMPLETE,
        message=message,
    )


def at_once(placement: Placement) -> tuple[int, int]:
    """The runs a pool runs at once and the CPUs they share, as a run's
    manifest records them."""
    return placement.jobs, len(placement.cpus)


def _run_here(
    tasks: list[RunTask], tools: Tools, placement: Placement, progress: Progress
) -> list[RunOutcome]:
    """Run ``tasks`` in this process's pool, each on CPUs of its own."""
    slots = CpuSlots(placement)
    pin = placement.pinning != OFF
    generators = Generators(placement.jobs)
    allow_starts()

    def one(task: RunTask) -> RunOutcome:
        with slots.take() as cpus:
            outcome = run_one(
                task,
                tools,
                placement.threads,
                progress,
                cpus,
                pin,
                at_once(placement),
                generators,
            )
        finish(progress, outcome)
        return outcome

    with generators, ThreadPoolExecutor(max_workers=placement.jobs) as pool:
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
    """How many of ``runs`` go at once here, and on which CPUs: as the
    backend's execution decides (Shadow: as cores and memory allow; local:
    as memory allows, or one at a time on the shared loopback)."""
    return execution(backend).placement(spec, backend, runs, jobs, threads, pinning)


@dataclass(frozen=True)
class RunChoice:
    """Whether a (variant, seed) runs, and why not."""

    variant: str
    seed: int
    run_dir: Path
    complete: bool  # a complete run of this backend is there
    changed: tuple[str, ...]  # the parts of its identity that differ from the spec's now

    @property
    def current(self) -> bool:
        return self.complete and not self.changed


def choose_runs(
    spec: Spec, layout: Layout, backend: Backend, versions: dict[str, str | None] | None
) -> list[RunChoice]:
    """Every (variant, seed) with what is in its place. Without ``versions``
    (the tools are elsewhere, on a cluster) only the spec's parts are compared."""
    choices = []
    for variant, seed in spec.runs():
        run_dir = layout.run_dir(variant.name, seed)
        record = read_run_if_any(run_dir)
        complete = record is not None and record.complete and record.backend == backend.name
        changed: list[str] = []
        if record is not None and complete:
            expected = spec_parts(spec, variant, seed, backend)
            if versions is not None:
                expected |= tools_parts(variant, versions)
            changed = changed_parts(record.identity, expected)
        choices.append(RunChoice(variant.name, seed, run_dir, complete, tuple(changed)))
    return choices


def _local_versions(
    spec: Spec, backend: Backend, tools: Tools | None
) -> tuple[Tools | None, dict[str, str | None] | None]:
    """This machine's tools and their versions, or None where it lacks them."""
    if tools is None:
        try:
            tools = resolve_tools(spec, backend)
        except PrerequisiteError:
            return None, None
    return tools, tools.versions


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
    keep_stale: bool = False,
    retry_failed: bool = False,
    measure_params: MeasureParams | None = None,
    console: Console = TERMINAL,
) -> list[RunOutcome]:
    """Generate and simulate every run not yet complete; return every outcome.

    Variants that measure consensus parameters from another variant
    (``consensus_from``) run after every other run, with the values
    ``measure_params`` gives for their seed; a seed whose reference failed
    fails them, with the reason.

    A complete run whose identity differs from what the spec now gives is
    run again (kept aside until its replacement completes), or with
    ``keep_stale`` kept as it is, and the report marks it stale. With
    ``retry_failed``, complete runs whose checks failed in the last report
    run again (kept aside until their replacements complete). Runs go to
    this machine's pool unless ``executor`` sends them elsewhere (a Dask
    cluster, Slurm); either way a failed run is reported and the others go
    on."""
    backend = backend or default_backend()
    for warning in backend.warnings(spec):
        console.err(warning)
    tools, versions = _local_versions(spec, backend, tools)
    choices = choose_runs(spec, layout, backend, versions)
    sort = _Sort(spec, layout, tuple(command), backend, keep_stale, retry_failed)
    outcomes, todo = _sort_runs(sort, choices, console)
    _say_what_is_kept(choices, outcomes, todo, keep_stale, console)
    if not todo:  # no placement, no progress: nothing runs
        return outcomes
    console.out(f"backend: {backend.name}")
    # Variants that measure parameters from other runs go after those runs.
    first = [t for t in todo if not spec.variant(t.variant).consensus_from]
    then = [t for t in todo if spec.variant(t.variant).consensus_from]
    with Progress(len(todo)) as progress, ExitStack() as claims:
        if executor is not None:
            console.out(f"executor: {executor.describe()}")
        else:
            placement = plan_placement(spec, backend, len(todo), jobs, threads, pinning)
            if placement.pinning == OWN_CPUS:
                # Held while the pool runs: no other runner pins onto these CPUs.
                mine, taken = claims.enter_context(claimed_cpus(list(placement.cpus)))
                if taken:
                    holders = ", ".join(sorted({holder(c) or "?" for c in taken}))
                    placement = without(placement, taken, f"pid {holders}")
            console.out(f"placement: {placement.describe(simulated=backend.simulated)}")
            tools = tools or resolve_tools(spec, backend)
        for wave, measures in ((first, False), (then, True)):
            ready = _measure(wave, measure_params, progress, outcomes) if measures else wave
            if not ready:
                continue
            if executor is not None:
                outcomes += executor.run(ready, progress)
            else:
                assert tools is not None
                outcomes += _run_here(ready, tools, placement, progress)
    return outcomes


@dataclass(frozen=True)
class _Sort:
    """What sorting the runs into skipped and to do goes by."""

    spec: Spec
    layout: Layout
    command: tuple[str, ...]
    backend: Backend
    keep_stale: bool
    retry_failed: bool

    def task(self, c: RunChoice, replaces: bool) -> RunTask:
        return RunTask(
            self.spec, c.variant, c.seed, self.layout, self.command, self.backend, replaces
        )


def _sort_runs(
    sort: _Sort, choices: list[RunChoice], console: Console
) -> tuple[list[RunOutcome], list[RunTask]]:
    """The runs skipped, as outcomes, and the runs to do, as tasks."""
    outcomes: list[RunOutcome] = []
    todo = []
    # The runs whose checks failed in the last analyze, by their key.
    checks = sort.layout.data_json("checks")
    checks_failed = runs_with_failures(checks) if sort.retry_failed else set()
    for c in choices:
        if c.complete and (c.variant, c.seed) in checks_failed:
            console.out(f"{c.variant}/seed-{c.seed}: its checks failed; running it again")
            todo.append(sort.task(c, True))
        elif c.current or (sort.keep_stale and c.complete):
            outcomes.append(RunOutcome(c.variant, c.seed, "skipped", c.run_dir))
        else:
            todo.append(sort.task(c, c.complete))
    return outcomes, todo


def _say_what_is_kept(
    choices: list[RunChoice],
    skipped: list[RunOutcome],
    todo: list[RunTask],
    keep_stale: bool,
    console: Console,
) -> None:
    """Tell how many complete runs are skipped, and which differ from what
    the spec now gives and what becomes of them."""
    if skipped and todo:  # with nothing to do, the caller's last line says so
        console.out(f"{len(skipped)} of {len(choices)} runs already complete; skipping them")
    stale = [c for c in choices if c.complete and c.changed]
    if stale:
        what = (
            "kept as they are (--keep-stale): the report lists them"
            if keep_stale
            else ("running them again")
        )
        console.out(f"{len(stale)} complete runs differ from what the spec now gives; {what}:")
        for c in stale:
            console.out(f"  {c.variant}/seed-{c.seed}: {', '.join(c.changed)} changed")


def generate_experiment(
    spec: Spec, layout: Layout, command: list[str], backend: Backend, tools: Tools
) -> tuple[list[Path], int]:
    """Write every run directory that is not complete and current, without
    running it; the directories written and the number left as they were.
    Runs of variants that measure parameters from other runs are left to
    ``run``, which measures them first."""
    todo = []
    kept = 0
    for c in choose_runs(spec, layout, backend, tools.versions):
        if c.current or spec.variant(c.variant).consensus_from:
            kept += 1
            continue
        if c.complete:  # of another identity: kept aside, as a re-run would
            aside = stale_path(c.run_dir)
            if aside.exists():
                shutil.rmtree(aside)
            c.run_dir.rename(aside)
        todo.append(c)
    if not todo:
        return [], kept
    jobs = min(len(todo), len(usable_cpus()))
    with Generators(jobs) as generate, ThreadPoolExecutor(max_workers=jobs) as pool:
        generated = pool.map(
            lambda c: generate(
                spec, spec.variant(c.variant), c.seed, layout, tools, command, 1, backend
            ),
            todo,
        )
        return [g.run_dir for g in generated], kept
