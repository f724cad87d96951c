"""One writer per experiment: an exclusive lock on its results directory.

The lock is an OS lock (``flock``) on ``<experiment>/.lock``: the kernel
drops it when its holder exits, however it exits, so a killed runner never
blocks the next one. The file also names the holder (pid and command line)
so a second runner can say who is at work.
"""

from __future__ import annotations

import fcntl
import os
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from runner.errors import RunError

LOCK_FILE = ".lock"


class ExperimentBusy(RunError):
    """Another process holds the experiment's lock."""


def _busy(fd: int, experiment_dir: Path) -> ExperimentBusy:
    holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "unknown"
    return ExperimentBusy(
        f"{experiment_dir} is in use by another runner ({holder}); "
        "wait for it to finish or stop it, then run again"
    )


def check_not_busy(experiment_dir: Path) -> None:
    """Stop at once if another process holds the lock; create nothing.

    Cheap, so a runner can ask before its heavy imports; taking the lock
    (``experiment_lock``) still decides."""
    try:
        fd = os.open(experiment_dir / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _busy(fd, experiment_dir) from None
    finally:
        os.close(fd)


@contextmanager
def experiment_lock(experiment_dir: Path, command: list[str]) -> Iterator[None]:
    """Hold the experiment's lock for the block, or stop at once, touching
    nothing, if another process holds it."""
    experiment_dir.mkdir(parents=True, exist_ok=True)
    path = experiment_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(fd, experiment_dir) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {shlex.join(command)}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock
