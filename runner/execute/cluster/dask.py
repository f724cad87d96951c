"""Hand an experiment's runs to a Dask cluster, one task per (variant, seed).

The results directory must be on a filesystem that the client and every
worker share: workers write their runs there, as the local pool does. The
client shows the same progress display (workers send their phases and
Shadow's percentages as events), a failed run is reported and the others go
on, and a run whose worker is lost is run once more before it counts as
failed. For that to be exactly once, the scheduler should not retry on its
own: start it with DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0 (the
clusters this module starts itself are set so).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dask
from distributed import Client, KilledWorker, as_completed
from distributed.comm.core import CommClosedError

from runner.execute.cluster.worker import PROGRESS_TOPIC, SHARE_TOKEN, run_on_worker
from runner.execute.progress import Progress
from runner.execute.run_all import RunOutcome, RunTask, finish, record_failure

# What a lost worker looks like from the client.
WORKER_LOST = (KilledWorker, CommClosedError)
RETRIES_AFTER_LOSS = 1
CONNECT_TIMEOUT_S = 30


class DaskExecutor:
    def __init__(self, address: str, pinning: str, threads: int | None = None) -> None:
        self.address = address
        self.pinning = pinning
        self.threads = threads

    def describe(self) -> str:
        return f"Dask scheduler at {self.address}, CPU pinning {self.pinning} on the workers"

    @contextmanager
    def cluster(self, tasks: list[RunTask]) -> Iterator[Any]:
        """What the client connects to: here an address; Slurm starts a cluster."""
        yield self.address

    def run(self, tasks: list[RunTask], progress: Progress) -> list[RunOutcome]:
        if not tasks:
            return []
        token = uuid.uuid4().hex
        experiment_dir = tasks[0].layout.experiment_dir
        experiment_dir.mkdir(parents=True, exist_ok=True)
        (experiment_dir / SHARE_TOKEN).write_text(token)
        with (
            dask.config.set({"distributed.scheduler.allowed-failures": 0}),
            self.cluster(tasks) as target,
            Client(target, timeout=CONNECT_TIMEOUT_S) as client,
        ):
            client.subscribe_topic(PROGRESS_TOPIC, lambda event: _show(progress, event[1]))
            return _gather(client, tasks, progress, (self.pinning, self.threads, token))


def _show(progress: Progress, message: dict[str, Any]) -> None:
    if "phase" in message:
        progress.phase(message["run"], message["phase"])
    elif "percent" in message:
        progress.percent(message["run"], int(message["percent"]))


def _gather(
    client: Client, tasks: list[RunTask], progress: Progress, settings: tuple[Any, ...]
) -> list[RunOutcome]:
    """Submit every task, collect the outcomes; run again a task whose worker was lost."""

    def submit(task: RunTask, attempt: int) -> Any:
        key = f"run-{task.layout.experiment}-{task.label}-attempt-{attempt}"
        return client.submit(run_on_worker, task, *settings, key=key, pure=False)

    pending = {submit(task, 0): (task, 0) for task in tasks}
    outcomes: list[RunOutcome] = []
    completed = as_completed(list(pending))
    try:
        for future in completed:
            task, attempt = pending.pop(future)
            try:
                outcome = future.result()
            except WORKER_LOST as exc:
                if attempt < RETRIES_AFTER_LOSS:
                    progress.note(f"{task.label}: its worker was lost ({exc}); running it again")
                    retry = submit(task, attempt + 1)
                    pending[retry] = (task, attempt + 1)
                    completed.add(retry)
                    continue
                outcome = record_failure(task, f"its worker was lost {attempt + 1} times: {exc}")
            except Exception as exc:  # noqa: BLE001 - whatever a worker raised is reported
                outcome = record_failure(
                    task,
                    f"the Dask task failed: {exc!r} (do the workers run this project's "
                    "Python environment, and see the results directory?)",
                )
            finish(progress, outcome)
            outcomes.append(outcome)
    except KeyboardInterrupt:
        client.cancel(list(pending), force=True)
        raise
    return outcomes
