"""One build of a cached program at a time: ``<dir>.lock`` beside the build's
directory, holding the builder's pid.

Two clones (or two shells) share the cache, and a build treats an unfinished
directory as interrupted and deletes it: without the lock a second build
deletes the first one's work while it runs. With it the second waits, says
for whom, and then finds the first one's complete build.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from runner.console import TERMINAL


def lock_path(where: Path) -> Path:
    return where.parent / f"{where.name}.lock"


def _holder(handle: IO[str]) -> str:
    """The pid the holder wrote, or "unknown" (it may not have written it yet)."""
    handle.seek(0)
    text = handle.read().strip()
    return text if text.isdigit() else "unknown"


@contextlib.contextmanager
def build_lock(name: str, where: Path) -> Iterator[None]:
    """Hold the lock of the build in ``where``, waiting (and saying so) while
    another process holds it; the lock file names this process meanwhile."""
    lock = lock_path(where)
    lock.parent.mkdir(parents=True, exist_ok=True)
    # "a+", not "w": opening must not erase the holder's pid before we wait.
    with lock.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            TERMINAL.out(
                f"{name}: waiting for the build in progress in {where} "
                f"(lock held by pid {_holder(handle)})"
            )
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield
