"""The local backend's execution (runner.execute.execution): a network in a
network namespace of its own, several at once as memory allows, or on the
shared loopback, one at a time on this machine."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from runner.execute.execution import Ran
from runner.execute.local.netns import run_in_namespace
from runner.execute.local.processes import PROCESSES_CPU, machine_slot, run_local
from runner.execute.placement import OFF, Placement, choose_placement
from runner.manifest import read_run, record_local_clock
from runner.network.backends import NAMESPACE, Backend, local_network
from runner.network.capacity import experiment_size, machine_memory_mib
from runner.spec.model import Spec

LOCAL_RUNS_AT_ONCE = 4  # networks in namespaces of their own, at most, by default


def _no_wait() -> float:
    return 0.0


class LocalExecution:
    """Real processes on this machine, in real time."""

    def placement(
        self,
        spec: Spec,
        backend: Backend,
        runs: int,
        jobs: int | None,
        threads: int | None,
        pinning: str,
    ) -> Placement:
        """Local networks on the shared loopback use this machine's addresses
        and ports: one at a time. In namespaces of their own, as many as
        memory allows, up to LOCAL_RUNS_AT_ONCE unless ``jobs`` says."""
        if local_network() != NAMESPACE:
            return choose_placement(runs, jobs=1, threads=1, pinning=OFF)
        # Real-time networks wait on their clocks more than they compute, so
        # their number is bounded by memory and a ceiling, not by cores.
        size = experiment_size(spec, backend, 1)
        memory = machine_memory_mib()
        fits = int(memory * 0.9) // max(1, size.run_mib) if memory else LOCAL_RUNS_AT_ONCE
        at_once = jobs or max(1, min(runs, LOCAL_RUNS_AT_ONCE, fits))
        return choose_placement(runs, jobs=at_once, threads=1, pinning=OFF)

    def run(
        self,
        run_dir: Path,
        programs: dict[str, str],
        measure_s: float,
        threads: int,
        phase: Callable[[str], None],
        on_progress: Callable[[int], None],
        cpus: frozenset[int] | None,
        pin: bool,
    ) -> Ran:
        """Start the network's processes; its CPU is every process's, read
        from /proc as they run."""
        record = read_run(run_dir)
        # Every host at its own address where the machine gives the run a
        # network namespace (its record says which): a network of its
        # own, beside others. On the shared loopback, one at a time.
        own_network = record.local_network == NAMESPACE
        runner = run_in_namespace if own_network else run_local
        slot: AbstractContextManager[Callable[[], float]] = (
            nullcontext(_no_wait)
            if own_network
            else machine_slot(lambda who: phase(f"wait for {who}"))
        )
        with slot as wait_time:
            waited = wait_time()
            phase("run")
            started = time.monotonic()
            ran = runner(run_dir, record, programs, measure_s, on_progress)
        phases = dict(ran.phases)
        cpu_s = phases.pop(PROCESSES_CPU, 0.0)
        record = record_local_clock(
            record,
            clock_epoch=ran.clock_epoch,
            process_cpu_s=ran.process_cpu_s,
            bootstrap_s=ran.bootstrap_s,
            measure_s=ran.measure_s,
            phases_s=phases,
        )
        return Ran(record, cpu_s, time.monotonic() - started, waited)
