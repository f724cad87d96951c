"""Networks generated in processes of their own.

Runs that go at once on this machine each write their network (keys,
configs) in a worker process, not in a thread of the runner: in threads,
Python's interpreter lock made every run's generation wait for every
other's, so that no run started simulating until all of them had their
networks. Each run now starts simulating as soon as its own network exists,
and its generation's CPU time is its own (measured in the worker, with the
short tools it starts).

A worker is ``python -m runner.execute.generation``, started once per job
slot and fed jobs over a pipe: unlike multiprocessing's spawn and
forkserver, it never re-imports the caller's main script, so the runner's
Python interface works the same from a script, a notebook or standard input.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import resource
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from runner.errors import RunError
from runner.network.generate import generate_run


@dataclass(frozen=True)
class Generated:
    run_dir: Path
    cpu_s: float  # the worker's CPU seconds for it, its tools' included
    pid: int  # the process that wrote it


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    tools = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + tools.ru_utime + tools.ru_stime


def generate_measured(generate: Callable[..., Path], *args: Any) -> Generated:
    """``generate(*args)`` with the CPU seconds it took in this process."""
    before = _cpu_seconds()
    run_dir = generate(*args)
    return Generated(run_dir, _cpu_seconds() - before, os.getpid())


# Runs the generation of one run, given generate_run's arguments.
Generate = Callable[..., Generated]


def in_this_process(*args: Any) -> Generated:
    """Generation in the calling process (a cluster worker runs one run)."""
    return generate_measured(generate_run, *args)


class _Worker:
    """One worker process: jobs go down its standard input, answers come
    back on a pipe of their own (its standard output stays the user's)."""

    def __init__(self) -> None:
        answers, self._theirs = os.pipe()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "runner.execute.generation", str(self._theirs)],
            stdin=subprocess.PIPE,
            pass_fds=(self._theirs,),
            env=env,
        )
        os.close(self._theirs)
        self._answers: IO[bytes] = os.fdopen(answers, "rb")

    def call(self, target: Callable[..., Path], args: tuple[Any, ...]) -> Generated:
        assert self.proc.stdin is not None
        try:
            pickle.dump((target, args), self.proc.stdin)
            self.proc.stdin.flush()
            ok, value = pickle.load(self._answers)
        except (EOFError, BrokenPipeError, pickle.UnpicklingError) as exc:
            raise RunError(f"the generation worker ended ({exc or 'no answer'})") from exc
        if not ok:
            raise value
        assert isinstance(value, Generated)
        return value

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()  # end of jobs: the worker exits
        self.proc.wait()
        self._answers.close()


class Generators:
    """Up to ``jobs`` worker processes that generate runs' networks, started
    as jobs need them; ``target`` is what a worker runs (generate_run; a
    test's stand-in, which the worker must be able to import)."""

    def __init__(self, jobs: int, target: Callable[..., Path] = generate_run) -> None:
        self._jobs = max(1, jobs)
        self._target = target
        self._workers: list[_Worker] = []
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()

    def __call__(self, *args: Any) -> Generated:
        """``target(*args)`` in a worker, with its CPU seconds there."""
        worker = self._take()
        try:
            return worker.call(self._target, args)
        finally:
            self._idle.put(worker)

    def _take(self) -> _Worker:
        with self._lock:
            if self._idle.empty() and len(self._workers) < self._jobs:
                self._workers.append(_Worker())
                return self._workers[-1]
        return self._idle.get()

    def __enter__(self) -> Generators:
        return self

    def __exit__(self, *exc: object) -> None:
        for worker in self._workers:
            worker.close()


def _serve(answers_fd: int) -> None:
    """A worker's loop: each job from standard input answered on the pipe."""
    jobs = sys.stdin.buffer
    with os.fdopen(answers_fd, "wb") as answers:
        while True:
            try:
                target, args = pickle.load(jobs)
            except EOFError:
                return
            try:
                answer: tuple[bool, Any] = (True, generate_measured(target, *args))
            except Exception as exc:  # noqa: BLE001 - every failure goes back to the runner
                answer = (False, exc if _picklable(exc) else RunError(str(exc)))
            pickle.dump(answer, answers)
            answers.flush()


def _picklable(value: object) -> bool:
    try:
        pickle.dumps(value)
    except Exception:  # noqa: BLE001 - any reason it cannot cross the pipe
        return False
    return True


if __name__ == "__main__":
    # Under its own name, so that what it sends back unpickles as
    # runner.execute.generation's classes, not __main__'s.
    from runner.execute.generation import _serve as serve

    serve(int(sys.argv[1]))
