"""Where a simulation's CPU goes: Shadow's own threads (user and system)
and each program it ran, by host, sampled from /proc while it runs.

Shadow runs every managed process (tor, tgen, oniontrace) as a direct
child, in ``shadow.data/hosts/<host>`` as its working directory, so a
child's host is the name of that directory and its program its command
name. The kernel counts a process's CPU only until it exits, and Shadow
reaps them at the end: the last sample (at most ``interval`` seconds
before) is what a process is charged, and the rest of the run's CPU is
reported apart as not sampled, never spread over the programs.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcStat:
    ppid: int
    user_s: float
    system_s: float


def read_stat(pid: int, proc: Path = Path("/proc")) -> ProcStat | None:
    """A process's parent and its own user and system CPU seconds (its
    threads, not its reaped children); None once it is gone."""
    try:
        text = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and brackets: count after the last ")".
    fields = text.rpartition(")")[2].split()
    return ProcStat(int(fields[1]), int(fields[11]) / _TICK, int(fields[12]) / _TICK)


def host_and_program(pid: int, proc: Path = Path("/proc")) -> tuple[str, str] | None:
    """(host, program) of a process Shadow runs, from its working directory
    and command name; None for anything else (or a process already gone)."""
    try:
        cwd = Path(os.readlink(proc / str(pid) / "cwd"))
        program = (proc / str(pid) / "comm").read_text().strip()
    except OSError:
        return None
    if cwd.parent.name != "hosts":
        return None
    return cwd.name, program


@dataclass
class CpuProfile:
    """Shadow's own CPU seconds and each host's programs' (last sampled)."""

    shadow_user_s: float = 0.0
    shadow_system_s: float = 0.0
    # host -> program -> CPU seconds (user plus system)
    programs: dict[str, dict[str, float]] = field(default_factory=dict)

    def as_record(self, total_s: float) -> dict[str, object]:
        """The profile as the run's record keeps it, with the part of the
        run's total (``total_s``, from the exit's resource usage) that no
        sample saw."""
        sampled = self.shadow_user_s + self.shadow_system_s
        sampled += sum(s for programs in self.programs.values() for s in programs.values())
        return {
            "shadow_user_s": round(self.shadow_user_s, 2),
            "shadow_system_s": round(self.shadow_system_s, 2),
            "programs_s": {
                host: {p: round(s, 2) for p, s in sorted(programs.items())}
                for host, programs in sorted(self.programs.items())
            },
            "not_sampled_s": round(max(0.0, total_s - sampled), 2),
        }


class ChildCpuSampler:
    """Samples, every ``interval`` seconds on a thread of its own, the CPU
    of process ``pid`` and of every child it runs in a host's directory."""

    def __init__(self, pid: int, interval: float = 1.0, proc: Path = Path("/proc")) -> None:
        self.pid = pid
        self.interval = interval
        self.proc = proc
        self._children: dict[int, tuple[str, str, float]] = {}
        self._own = ProcStat(0, 0.0, 0.0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="child-cpu", daemon=True)

    def start(self) -> ChildCpuSampler:
        self._thread.start()
        return self

    def stop(self) -> CpuProfile:
        """Stop sampling; the profile as last sampled."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        profile = CpuProfile(self._own.user_s, self._own.system_s)
        for host, program, seconds in self._children.values():
            programs = profile.programs.setdefault(host, {})
            programs[program] = programs.get(program, 0.0) + seconds
        return profile

    def sample(self) -> None:
        """One look at the process and its children."""
        own = read_stat(self.pid, self.proc)
        # Once reaped, the process id may be another's: keep only our child's figures.
        if own is not None and own.ppid == os.getpid():
            self._own = own
        for entry in self.proc.iterdir():
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            stat = read_stat(pid, self.proc)
            if stat is None or stat.ppid != self.pid:
                continue
            known = self._children.get(pid)
            where = known[:2] if known else host_and_program(pid, self.proc)
            if where is not None:
                self._children[pid] = (*where, stat.user_s + stat.system_s)

    def _loop(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval):
                return
