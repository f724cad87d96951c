"""Dask workers as Slurm jobs (dask-jobqueue): each job is one worker that
runs one run at a time with ``cores`` Shadow threads.

The scheduler runs in the client's process; the jobs are cancelled when the
experiment ends or is interrupted. Workers run the client's Python
(``sys.executable``), so the project's environment must be on a path every
node sees, like the results directory.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from runner.execute.cluster.dask import DaskExecutor
from runner.execute.cluster.options import SlurmOptions
from runner.execute.run_all import RunTask


class SlurmExecutor(DaskExecutor):
    def __init__(self, options: SlurmOptions, pinning: str) -> None:
        super().__init__("(started with the experiment)", pinning, threads=options.cores)
        self.options = options

    def describe(self) -> str:
        o = self.options
        return (
            f"Slurm through dask-jobqueue: partition {o.queue or '(default)'}, "
            f"{o.cores} CPUs, {o.memory} and {o.walltime} per worker job, "
            f"{f'at most {o.jobs} jobs' if o.jobs else 'a job per run at most'}; "
            f"CPU pinning {self.pinning}"
        )

    @contextmanager
    def cluster(self, tasks: list[RunTask]) -> Iterator[Any]:
        from dask_jobqueue import SLURMCluster

        o = self.options
        logs = tasks[0].layout.experiment_dir / "slurm-logs"
        logs.mkdir(parents=True, exist_ok=True)
        cluster = SLURMCluster(
            queue=o.queue,
            account=o.account,
            cores=1,  # one run at a time per worker...
            job_cpu=o.cores,  # ...with every CPU of the job as its Shadow threads
            processes=1,
            memory=o.memory,
            walltime=o.walltime,
            python=sys.executable,
            log_directory=str(logs),
            job_name="tornet-run",
        )
        try:
            cluster.scale(jobs=min(len(tasks), o.jobs or len(tasks)))
            yield cluster
        finally:
            cluster.close()
