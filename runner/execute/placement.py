"""How many runs go at once, how many Shadow threads each gets, and on which CPUs.

Shadow pins each worker thread, and the processes it runs, to one CPU chosen
among the CPUs its own process may use. Shadows started side by side all see
the same CPUs and pile onto the same ones: at 4 runs at once each run took
twice as long, at 15 more than ten times (docs/backends.md, "Runs at once"). So each
concurrent run gets a disjoint set of CPUs, inside which its Shadow still
pins ("own-cpus"); "off" turns Shadow's pinning off instead, and "shared"
is Shadow's own default, kept to measure the difference.
"""

from __future__ import annotations

import os
import queue
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

OWN_CPUS = "own-cpus"
OFF = "off"
SHARED = "shared"
PINNING_MODES = (OWN_CPUS, OFF, SHARED)


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (a Slurm job or taskset may give fewer)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


@dataclass(frozen=True)
class Placement:
    jobs: int  # runs at once
    threads: int  # Shadow threads per run
    pinning: str  # one of PINNING_MODES
    cpus: tuple[int, ...]  # the CPUs shared out among the runs
    note: str = ""  # why the placement differs from what was asked, if it does

    def describe(self, simulated: bool = True) -> str:
        plural = "s" if self.jobs > 1 else ""
        if not simulated:  # real processes: no Shadow threads, no pinning
            return f"{self.jobs} run{plural} at once, as real processes"
        text = (
            f"{self.jobs} run{plural} at once, {self.threads} Shadow thread"
            f"{'s' if self.threads > 1 else ''} each, CPU pinning {self.pinning} "
            f"({len(self.cpus)} CPUs)"
        )
        return text + (f"; {self.note}" if self.note else "")


def choose_placement(
    runs: int,
    cpus: list[int] | None = None,
    jobs: int | None = None,
    threads: int | None = None,
    pinning: str = OWN_CPUS,
    run_mib: int | None = None,
    memory_mib: int | None = None,
    hosts: int | None = None,
) -> Placement:
    """Runs at once and threads per run from the cores, the runs to do and memory.

    Small simulations gain little from a second Shadow thread and a lot from
    a second run beside them (bench/results.md, "Runs at once"), so by default
    every core runs a run of its own, as far as the runs to do and the memory
    (``run_mib`` a run, of ``memory_mib``) allow; cores left over become
    threads, up to one per simulated host (Shadow runs a host on one thread
    at a time). An explicit ``jobs`` or ``threads`` is kept.
    """
    if pinning not in PINNING_MODES:
        raise ValueError(
            f"CPU pinning: expected one of {', '.join(PINNING_MODES)}, got {pinning!r}"
        )
    cpus = cpus or usable_cpus()
    cores = len(cpus)
    if jobs is None:
        jobs = max(1, min(max(runs, 1), cores // (threads or 1)))
        if run_mib and memory_mib:
            jobs = max(1, min(jobs, int(memory_mib * 0.9) // run_mib))
    if threads is None:
        threads = max(1, min(cores // jobs, hosts or cores))
    note = ""
    if pinning == OWN_CPUS and jobs * threads > cores:
        # Disjoint sets are impossible; overlapping pins would collide.
        note = f"{jobs} x {threads} threads exceed {cores} CPUs, so pinning is off"
        pinning = OFF
    return Placement(jobs, threads, pinning, tuple(cpus), note)


def without(placement: Placement, taken: list[int], holders: str) -> Placement:
    """``placement`` kept off the CPUs ``taken`` by other runners (pinned
    there by ``holders``): its runs pinned to the CPUs left, fewer at once
    where fewer are left, or unpinned where none is."""
    free = tuple(c for c in placement.cpus if c not in taken)
    where = f"CPUs {', '.join(map(str, taken))} are pinned by another runner ({holders})"
    if not free:
        return Placement(
            placement.jobs,
            placement.threads,
            OFF,
            placement.cpus,
            f"{where}: this one runs unpinned beside it",
        )
    threads = min(placement.threads, len(free))
    jobs = max(1, min(placement.jobs, len(free) // threads))
    return Placement(jobs, threads, placement.pinning, free, f"{where}: this one pins to the rest")


class CpuSlots:
    """Hands each concurrent run its own CPUs for as long as it runs."""

    def __init__(self, placement: Placement) -> None:
        self.placement = placement
        self._free: queue.Queue[frozenset[int] | None] = queue.Queue()
        for slot in range(placement.jobs):
            if placement.pinning == OWN_CPUS:
                first = slot * placement.threads
                self._free.put(frozenset(placement.cpus[first : first + placement.threads]))
            else:
                self._free.put(None)  # no affinity set: Shadow sees every CPU

    @contextmanager
    def take(self) -> Iterator[frozenset[int] | None]:
        cpus = self._free.get()
        try:
            yield cpus
        finally:
            self._free.put(cpus)
