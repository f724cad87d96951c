"""Networks generated in processes of their own.

Runs that go at once on this machine each write their network (keys,
configs) in a worker process, not in a thread of the runner: in threads,
Python's interpreter lock made every run's generation wait for every
other's, so that no run started simulating until all of them had their
networks. Each run now starts simulating as soon as its own network exists,
and its generation's CPU time is its own (measured in the worker, with the
short tools it starts). Workers fork from a server that has imported the
generator once, so a worker costs no second start-up of the runner.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.layout import Layout
from runner.network.backends import Backend
from runner.network.generate import Tools, generate_run
from runner.spec.model import Spec, Variant

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["runner.network.generate"])


@dataclass(frozen=True)
class Generated:
    run_dir: Path
    cpu_s: float  # the worker's CPU seconds for it, its tools' included
    pid: int  # the worker process that wrote it


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    tools = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + tools.ru_utime + tools.ru_stime


def generate_measured(generate: Callable[..., Path], *args: Any) -> Generated:
    """``generate(*args)`` with the CPU seconds it took in this process."""
    before = _cpu_seconds()
    run_dir = generate(*args)
    return Generated(run_dir, _cpu_seconds() - before, os.getpid())


# Runs the generation of one run: generate_run's arguments, in a worker.
Generate = Callable[[Spec, Variant, int, Layout, Tools, list[str], int, Backend], Generated]


class Generators:
    """A pool of ``jobs`` worker processes that generate runs' networks;
    ``target`` is what a worker runs (generate_run; a test's stand-in)."""

    def __init__(self, jobs: int, target: Callable[..., Path] = generate_run) -> None:
        self._pool = ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=_CONTEXT)
        self._target = target

    def __call__(self, *args: Any) -> Generated:
        """``target(*args)`` in a worker, with its CPU seconds there."""
        return self._pool.submit(generate_measured, self._target, *args).result()

    def __enter__(self) -> Generators:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def in_this_process(
    spec: Spec,
    variant: Variant,
    seed: int,
    layout: Layout,
    tools: Tools,
    command: list[str],
    threads: int,
    backend: Backend,
) -> Generated:
    """Generation in the calling process (a cluster worker runs one run)."""
    return generate_measured(
        generate_run, spec, variant, seed, layout, tools, command, threads, backend
    )
