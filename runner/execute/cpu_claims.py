"""CPUs claimed by the runners of this machine, so that two runners never
pin their runs to the same CPUs.

Each runner pins its runs to CPUs of their own (runner/execute/placement.py), but
a second runner started beside it (another experiment, another clone) sees
the same CPUs and pins onto them: pinned Shadow threads of two runners then
wait on each other, and each run took several times as long. A runner that
pins claims each CPU with an exclusive lock on a file of its own (released
when its pool ends, or when the process dies); a runner that finds some of
its CPUs claimed pins to the rest, or runs unpinned where none is left, and
says so.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

# Where the claims live: one lock file per CPU, shared by every runner here.
CLAIMS_ENV = "TORNET_CPU_CLAIMS"
DEFAULT_CLAIMS = Path("/tmp/tornet-experiments-cpus")


def claims_dir() -> Path:
    return Path(os.environ.get(CLAIMS_ENV) or DEFAULT_CLAIMS)


def _claim(path: Path) -> IO[str] | None:
    """The open, locked claim file, or None where another runner holds it."""
    handle = path.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def holder(cpu: int) -> str:
    """The pid that last claimed ``cpu``, as its claim file says ("" if none)."""
    try:
        return (claims_dir() / f"cpu-{cpu}").read_text().strip()
    except OSError:
        return ""


@contextmanager
def claimed_cpus(cpus: list[int]) -> Iterator[tuple[list[int], list[int]]]:
    """Claim each of ``cpus`` not claimed by another runner; yields (the
    CPUs claimed, the CPUs other runners hold). The claims last until the
    block ends."""
    folder = claims_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        mine, others = [], []
        for cpu in cpus:
            handle = _claim(folder / f"cpu-{cpu}")
            if handle is None:
                others.append(cpu)
            else:
                stack.callback(handle.close)
                mine.append(cpu)
        yield mine, others
