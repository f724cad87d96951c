"""Start processes so that none outlives the runner.

Every process is registered as it starts and stopped (TERM, then KILL) when
its set closes, on success, failure or interrupt. Linux's parent-death
signal covers the rest: if the runner itself is killed, the kernel sends
SIGKILL to every process it started.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from runner.execute.child_cpu import read_stat

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)
_registry: set[subprocess.Popen[Any]] = set()
_registry_lock = threading.Lock()
# Set by kill_all: a process registered after it (a run that was still
# generating its files when the interrupt came) is stopped as it starts,
# so that no run goes on behind an interrupted runner.
_stopping = threading.Event()


def _die_with_parent() -> None:  # runs in the child, before exec
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _stop(procs: list[subprocess.Popen[Any]], grace: float) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def register(proc: subprocess.Popen[Any]) -> None:
    """Let ``kill_all`` stop a process (Shadow's, or a set's); one started
    after ``kill_all`` is stopped at once."""
    with _registry_lock:
        _registry.add(proc)
        stopping = _stopping.is_set()
    if stopping:
        _stop([proc], grace=3.0)


def unregister(proc: subprocess.Popen[Any]) -> None:
    with _registry_lock:
        _registry.discard(proc)


def die_with_parent() -> None:
    """For ``preexec_fn``: the kernel kills the child if the runner dies."""
    _die_with_parent()


def process_cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds of a live process, from /proc/PID/stat;
    None once it is gone."""
    stat = read_stat(pid)
    return None if stat is None else stat.user_s + stat.system_s


def kill_all() -> None:
    """Stop every process any set started (for an interrupted runner), and
    every one started after, until ``allow_starts``."""
    with _registry_lock:
        _stopping.set()
        procs = list(_registry)
    _stop(procs, grace=3.0)


def allow_starts() -> None:
    """Let processes run again after ``kill_all`` (a new batch of runs)."""
    _stopping.clear()


class ProcessSet:
    def __init__(self) -> None:
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        # Processes meant to end on their own: status 0 is no failure.
        self.may_end: set[str] = set()

    def start(
        self,
        name: str,
        cmd: list[str],
        cwd: Path,
        stdout: Path,
        stderr: Path,
        env: dict[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        with stdout.open("wb") as out, stderr.open("wb") as err:
            proc = subprocess.Popen(
                cmd,
                cwd=cwd,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,
                env=(os.environ | env) if env else None,
            )
        self.procs.append((name, proc))
        register(proc)
        return proc

    def exited(self) -> list[tuple[str, int]]:
        """(name, exit status) of every process that has stopped, but those
        meant to end on their own that ended well."""
        return [
            (n, p.returncode)
            for n, p in self.procs
            if p.poll() is not None and not (n in self.may_end and p.returncode == 0)
        ]

    def stop(self, name: str, grace: float = 5.0) -> None:
        """Stop the process called ``name`` (TERM, then KILL) as planned: it
        no longer counts as having exited."""
        procs = [p for n, p in self.procs if n == name]
        self.procs = [(n, p) for n, p in self.procs if n != name]
        _stop(procs, grace)
        with _registry_lock:
            _registry.difference_update(procs)

    def pids(self) -> list[int]:
        return [p.pid for _, p in self.procs]

    def cpu_seconds(self) -> dict[str, float]:
        """name -> CPU seconds (user and system) each running process has
        used so far; processes that have exited are left out."""
        used = {}
        for name, proc in self.procs:
            if proc.poll() is None and (seconds := process_cpu_seconds(proc.pid)) is not None:
                used[name] = seconds
        return used

    def close(self, grace: float = 5.0) -> None:
        procs = [p for _, p in reversed(self.procs)]
        _stop(procs, grace)
        with _registry_lock:
            _registry.difference_update(procs)

    def __enter__(self) -> ProcessSet:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
