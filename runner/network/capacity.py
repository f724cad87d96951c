"""Whether an experiment's size can run on this machine, decided before
anything is written.

Two limits: the hosts of one run against a ceiling (each host is at least
one real process locally, and a simulated one under Shadow), and the memory
of the runs that go at once against this machine's memory. Memory is
estimated per process from measured figures (bench/results.md, "Memory per
process"); ``--force`` runs anyway.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from runner.errors import RunError
from runner.network.backends import Backend
from runner.network.mixing import variant_plan
from runner.network.plan import Host
from runner.spec.model import Spec, Variant

# Memory per process, measured (bench/results.md, "Memory per process") and
# rounded up, is the backend's: a tor by role (tor_mib), a helper (tgen,
# oniontrace, or the local stand-ins; helper_mib), the backend itself per
# run and per host (own_mib, host_mib), as is the default ceiling of hosts
# per run (max_hosts; TORNET_MAX_HOSTS or --max-hosts change it).
MEMORY_SHARE = 0.9  # of this machine's memory that runs may take


class TooLarge(RunError):
    """The experiment would not fit this machine."""


@dataclass(frozen=True)
class Size:
    hosts: int  # in the largest run
    tors: dict[str, int]  # tor processes by role (authority, relay, client)
    helpers: int
    runs_at_once: int
    backend: Backend

    @property
    def run_mib(self) -> int:
        b = self.backend
        tors = sum(b.tor_mib[role] * n for role, n in self.tors.items())
        return tors + self.helpers * b.helper_mib + b.own_mib + self.hosts * b.host_mib

    @property
    def memory_mib(self) -> int:
        return self.run_mib * self.runs_at_once


def _tor_role(host: Host) -> str:
    if host.role == "authority":
        return "authority"
    return "relay" if host.is_relay else "client"


# Above this many hosts a run's size is counted from the spec alone: building
# the network to count them would cost minutes and gigabytes before the
# answer, which is then "too large" anyway.
PLAN_HOSTS_LIMIT = 20_000


def counted_size(spec: Spec, variant: Variant, backend: Backend, runs_at_once: int) -> Size:
    """A run's size from the spec's counts, without building its network."""
    net = spec.network
    clients = 0
    client_relays = 0
    for group in net.clients:
        count = min(group.count, variant.clients.get(group.name, group.count))
        # As runner.network.plan adds them: rounded half to even.
        count += round(count * variant.extra_clients) + variant.add_clients.get(group.name, 0)
        clients += count
        client_relays += math.ceil(count * variant.client_relays.get(group.name, 0.0))
    # Drawn circuits: at most every hop of every circuit a relay of its own.
    relays = sum(g.count for g in net.relays) + (3 * net.circuits.count if net.circuits else 0)
    hosts = net.authorities + relays + clients + net.servers.count
    tors = {
        "authority": net.authorities,
        "relay": relays + client_relays,
        "client": clients - client_relays,
    }
    helpers = sum(tors.values()) + clients + net.servers.count
    return Size(hosts, tors, helpers, runs_at_once, backend)


def experiment_size(spec: Spec, backend: Backend, runs_at_once: int) -> Size:
    """The largest run of ``spec`` (over its variants, on its first seed)."""
    counted = [counted_size(spec, v, backend, runs_at_once) for v in spec.variants]
    if max(size.hosts for size in counted) > PLAN_HOSTS_LIMIT:
        return max(counted, key=lambda size: size.run_mib)
    largest: Size | None = None
    for variant in spec.variants:
        hosts = variant_plan(spec, variant, spec.seeds[0]).hosts
        tors = Counter(_tor_role(h) for h in hosts if h.runs_tor)
        # oniontrace per tor host, a tgen per client and server.
        helpers = sum(tors.values()) + sum(h.role in ("client", "server") for h in hosts)
        size = Size(len(hosts), dict(tors), helpers, runs_at_once, backend)
        if largest is None or size.run_mib > largest.run_mib:
            largest = size
    assert largest is not None  # a spec has at least one variant
    return largest


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
    return backend.max_hosts


def check_capacity(
    spec: Spec,
    backend: Backend,
    runs_at_once: int,
    max_hosts: int | None = None,
    memory_mib: int | None = None,
) -> Size:
    """Stop with a clear error if ``spec`` cannot run here; return its size."""
    size = experiment_size(spec, backend, runs_at_once)
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
            f"({size.run_mib / 1024:.1f} GiB a run: {sum(size.tors.values())} tor processes, "
            f"{size.helpers} helpers), more than {MEMORY_SHARE:.0%} of this machine's "
            f"{memory / 1024:.1f} GiB (try fewer --jobs)"
        )
    if problems:
        raise TooLarge(
            f"{spec.path}: too large for this machine: "
            + "; ".join(problems)
            + ". Nothing was written; --force runs it anyway."
        )
    return size
