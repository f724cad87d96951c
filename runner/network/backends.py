"""What differs between running a network under Shadow and as local processes.

Under Shadow every host has its own loopback and the clock starts in 2000.
Locally every host shares this machine: each gets its own address in
127.0.0.0/8 (Linux routes all of it to the loopback interface), binds its
SOCKS and control ports there, and certificates are made for today's clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from runner.network.plan import Host, NetworkPlan
from runner.network.tor_keys import SHADOW_CERT_TIME
from runner.network.torrc import Ports

SHADOW_EPOCH = 946684800  # 2000-01-01 00:00:00 UTC, Shadow's simulated start
LOCAL_CONTROL_PORT_BASE = 29051


@dataclass(frozen=True)
class Backend:
    name: str
    cert_time: str | None  # faketime for authority certificates; None: now
    local: bool
    # Seconds between consensuses. In real time a first consensus made before
    # the relays registered would leave clients waiting a whole interval.
    voting_interval: int

    def plan(self, plan: NetworkPlan) -> NetworkPlan:
        """The plan with the addresses this backend uses."""
        if not self.local:
            return plan
        return replace(plan, hosts=tuple(replace(h, ip=local_address(h.ip)) for h in plan.hosts))

    def socks_bind(self, host: Host) -> str:
        """Where a client's SOCKS port listens."""
        return host.ip if self.local else "127.0.0.1"

    def ports(self, index: int) -> Ports:
        """The ports of the index-th host (from 0). Control ports sit on
        127.0.0.1, where oniontrace connects, so locally each host needs its own."""
        if not self.local:
            return Ports()
        return Ports(control_port=LOCAL_CONTROL_PORT_BASE + index)

    def server_port(self, port: int) -> int:
        # Ports below 1024 need privileges a local user may not have.
        return port if not self.local or port >= 1024 else 10000 + port


SHADOW = Backend("shadow", SHADOW_CERT_TIME, local=False, voting_interval=60)
LOCAL = Backend("local", None, local=True, voting_interval=20)
BACKENDS = {b.name: b for b in (SHADOW, LOCAL)}


def local_address(ip: str) -> str:
    """100.B.H.L (the plan's address) -> 127.(100+B).H.L, away from 127.0.0.1."""
    first, block, high, low = (int(x) for x in ip.split("."))
    if first != 100:
        raise ValueError(f"not a planned address: {ip}")
    return f"127.{100 + block}.{high}.{low}"
