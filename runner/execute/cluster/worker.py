"""What a Dask worker does with one run: check this node, then run it here.

The node's own prerequisites are checked for every run, so a node that lacks
Shadow or the patched tor fails its runs with its own name in the message.
Progress goes back to the client as events on one topic.
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import replace

from distributed import get_client, get_worker

from runner.errors import PrerequisiteError, RunError
from runner.execute.placement import OFF, OWN_CPUS, CpuSlots, choose_placement, usable_cpus
from runner.execute.run_all import (
    RunOutcome,
    RunTask,
    at_once,
    record_failure,
    resolve_tools,
    run_one,
)
from runner.manifest import STATUS_FAILED

PROGRESS_TOPIC = "tornet-run-progress"

_slots: dict[tuple[tuple[int, ...], int, int | None, str], CpuSlots] = {}
_slots_lock = threading.Lock()


class EventReporter:
    """Sends a run's phases and Shadow's percentages to the client."""

    def __init__(self) -> None:
        self._worker = get_worker()
        self._last: dict[str, int] = {}

    def phase(self, run: str, phase: str) -> None:
        self._worker.log_event(PROGRESS_TOPIC, {"run": run, "phase": phase})

    def percent(self, run: str, percent: int) -> None:
        if self._last.get(run) != percent:  # Shadow repeats itself; the network need not
            self._last[run] = percent
            self._worker.log_event(PROGRESS_TOPIC, {"run": run, "percent": percent})


def node_cpus(pinning: str) -> tuple[list[int], str]:
    """The CPUs this worker may share among its runs, and the pinning to use.

    A Slurm job's CPUs are its own: booked, and confined to when Slurm's
    task/affinity or cgroup plugin is on; a job that books fewer CPUs than it
    may run on counts only the booked ones and does not pin. Workers that
    are not Slurm jobs may share a host: they split its CPUs, each worker's
    share in proportion to its threads, in the order of their addresses."""
    cpus = usable_cpus()
    if os.environ.get("SLURM_JOB_ID"):
        booked = os.environ.get("SLURM_CPUS_PER_TASK") or os.environ.get("SLURM_CPUS_ON_NODE")
        if booked and booked.isdigit() and int(booked) < len(cpus):
            return cpus[: int(booked)], OFF if pinning == OWN_CPUS else pinning
        return cpus, pinning
    worker = get_worker()
    workers = get_client().scheduler_info(n_workers=-1)["workers"]
    here = sorted(a for a, w in workers.items() if w["host"] == workers[worker.address]["host"])
    at_once = sum(workers[a]["nthreads"] for a in here)
    if at_once > len(cpus):  # more runs than CPUs on this host: no disjoint sets
        return cpus, OFF if pinning == OWN_CPUS else pinning
    per_run = len(cpus) // at_once
    before = sum(workers[a]["nthreads"] for a in here[: here.index(worker.address)])
    return cpus[before * per_run : (before + worker.state.nthreads) * per_run], pinning


def _worker_slots(nthreads: int, threads: int | None, pinning: str) -> CpuSlots:
    cpus, pinning = node_cpus(pinning)
    with _slots_lock:
        key = (tuple(cpus), nthreads, threads, pinning)
        if key not in _slots:
            placement = choose_placement(
                nthreads, cpus=cpus, jobs=nthreads, threads=threads, pinning=pinning
            )
            _slots[key] = CpuSlots(placement)
        return _slots[key]


SHARE_TOKEN = ".executor-token"


def sees_the_clients_results(task: RunTask, token: str) -> bool:
    """Whether this node sees the token the client wrote: the same directory,
    not merely one of the same name."""
    try:
        return (task.layout.experiment_dir / SHARE_TOKEN).read_text() == token
    except OSError:
        return False


def run_on_worker(task: RunTask, pinning: str, threads: int | None, token: str) -> RunOutcome:
    """Run ``task`` on this worker; a failure comes back as a failed outcome."""
    worker = get_worker()
    where = f"node {socket.gethostname()} (worker {worker.address})"
    if not sees_the_clients_results(task, token):
        return RunOutcome(
            task.variant,
            task.seed,
            STATUS_FAILED,
            task.layout.run_dir(task.variant, task.seed),
            f"{where} cannot see the results directory {task.layout.experiment_dir}: it "
            "must be on a filesystem that the client and every worker share",
        )
    try:
        tools = resolve_tools(task.spec, task.backend)
    except (PrerequisiteError, RunError) as exc:
        return record_failure(task, f"{where} lacks a prerequisite: {exc}")
    slots = _worker_slots(worker.state.nthreads, threads, pinning)
    with slots.take() as cpus:
        outcome = run_one(
            task,
            tools,
            slots.placement.threads,
            EventReporter(),
            cpus,
            pin=slots.placement.pinning != OFF,
            at_once=at_once(slots.placement),
        )
    return replace(outcome, error=f"{where}: {outcome.error}") if outcome.error else outcome
