"""Whether an experiment's size can run on this machine, decided before
anything is written.

Two limits: the hosts of one run against a ceiling (each host is at least
one real process locally, and a simulated one under Shadow), and the memory
of the runs that go at once against this machine's memory. Memory is
estimated per process from measured figures (bench/results.md, "Memory per
process"); ``--force`` runs anyway.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from runner.backends import Backend
from runner.errors import RunError
from runner.mixing import variant_plan
from runner.spec import Spec

# Measured peak resident memory per process (bench/results.md), rounded up.
TOR_MIB = 64
HELPER_MIB = 16  # tgen, oniontrace or their stand-ins
# Default ceilings of hosts per run; TORNET_MAX_HOSTS or --max-hosts change them.
MAX_HOSTS = {"shadow": 5000, "local": 200}
MEMORY_SHARE = 0.9  # of this machine's memory that runs may take


class TooLarge(RunError):
    """The experiment would not fit this machine."""


@dataclass(frozen=True)
class Size:
    hosts: int  # in the largest run
    tors: int
    helpers: int
    runs_at_once: int

    @property
    def memory_mib(self) -> int:
        per_run = self.tors * TOR_MIB + self.helpers * HELPER_MIB
        return per_run * self.runs_at_once


def experiment_size(spec: Spec, runs_at_once: int) -> Size:
    """The largest run of ``spec`` (over its variants, on its first seed)."""
    largest = (0, 0, 0)
    for variant in spec.variants:
        hosts = variant_plan(spec, variant, spec.seeds[0]).hosts
        tors = sum(h.runs_tor for h in hosts)
        # oniontrace per tor host, a tgen per client and server.
        helpers = tors + sum(h.role in ("client", "server") for h in hosts)
        largest = max(largest, (len(hosts), tors, helpers))
    return Size(*largest, runs_at_once=runs_at_once)


def machine_memory_mib(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def host_ceiling(backend: Backend, override: int | None = None) -> int:
    if override is not None:
        return override
    env = os.environ.get("TORNET_MAX_HOSTS")
    if env:
        try:
            return int(env)
        except ValueError:
            raise RunError(f"TORNET_MAX_HOSTS: expected a number of hosts, got {env!r}") from None
    return MAX_HOSTS[backend.name]


def check_capacity(
    spec: Spec,
    backend: Backend,
    runs_at_once: int,
    max_hosts: int | None = None,
    memory_mib: int | None = None,
) -> Size:
    """Stop with a clear error if ``spec`` cannot run here; return its size."""
    size = experiment_size(spec, runs_at_once)
    ceiling = host_ceiling(backend, max_hosts)
    problems = []
    if size.hosts > ceiling:
        problems.append(
            f"a run has {size.hosts} hosts, more than the {backend.name} backend's ceiling of "
            f"{ceiling} (set --max-hosts or TORNET_MAX_HOSTS)"
        )
    memory = memory_mib if memory_mib is not None else machine_memory_mib()
    if memory is not None and size.memory_mib > memory * MEMORY_SHARE:
        problems.append(
            f"{runs_at_once} run{'s' if runs_at_once > 1 else ''} at once "
            f"need{'' if runs_at_once > 1 else 's'} about {size.memory_mib / 1024:.1f} GiB "
            f"({size.tors} tor processes at {TOR_MIB} MiB and {size.helpers} others at "
            f"{HELPER_MIB} MiB per run), more than {MEMORY_SHARE:.0%} of this machine's "
            f"{memory / 1024:.1f} GiB (try fewer --jobs)"
        )
    if problems:
        raise TooLarge(
            f"{spec.path}: too large for this machine: "
            + "; ".join(problems)
            + ". Nothing was written; --force runs it anyway."
        )
    return size
