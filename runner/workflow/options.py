"""How an experiment's runs are placed, and what becomes of complete ones."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from runner.execute.placement import OWN_CPUS


def _default_executor() -> str:
    return os.environ.get("TORNET_EXECUTOR", "local")


@dataclass(frozen=True)
class RunOptions:
    """Where runs go and how many at once, with how many threads, on which
    CPUs; whether complete runs whose checks failed run again, and whether
    complete runs of another identity are kept. The defaults are the
    command line's."""

    jobs: int | None = None  # runs at once here (None: as cores and memory allow)
    threads: int | None = None  # Shadow threads a run (None: the cores shared out)
    pinning: str = OWN_CPUS
    executor: str = field(default_factory=_default_executor)  # local, a Dask address, slurm[:...]
    keep_stale: bool = False
    retry_failed: bool = False

    def runs_here(self) -> bool:
        """Whether the runs go to this machine (not to a cluster)."""
        from runner.execute.cluster.options import parse_executor

        return parse_executor(self.executor).kind == "local"
