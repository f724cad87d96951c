"""What ``runner.execute.run_all`` asks of a backend: how many of its runs go at
once here, and how one generated run runs. Network generation asks the rest
of it (``runner.network.backends.Backend``). Shadow's execution is in
``runner.execute.simulate``, the local backend's in
``runner.execute.local.execution``; ``runner.execute.by_backend`` finds
a backend's by its name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from runner.execute.placement import Placement
from runner.manifest import RunRecord
from runner.network.backends import Backend
from runner.spec.model import Spec


@dataclass(frozen=True)
class Ran:
    """What one run gives back."""

    record: RunRecord  # the run's record, with what the run recorded in it
    cpu_s: float  # CPU seconds the run's processes used
    work_s: float  # wall seconds the run took, waiting aside
    waited_s: float  # wall seconds it first waited for this machine


class Execution(Protocol):
    def placement(
        self,
        spec: Spec,
        backend: Backend,
        runs: int,
        jobs: int | None,
        threads: int | None,
        pinning: str,
    ) -> Placement:
        """How many of ``runs`` go at once here, with how many threads each,
        on which CPUs (``jobs``, ``threads``, ``pinning``: what was asked)."""
        ...

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
        """Run the generated network in ``run_dir`` with ``programs`` (by
        name) for ``measure_s`` of traffic, telling ``phase`` what it is
        doing and ``on_progress`` how far it is (percent). RunError if it
        fails."""
        ...
