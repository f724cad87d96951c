"""What differs between running a network under Shadow and as local processes.

Under Shadow every host has its own loopback and the clock starts in 2000.
Locally every host shares this machine and certificates are made for
today's clock. Each host gets its own address and binds its SOCKS port
there: in a network namespace of the run's own where the machine allows
one (10.0.0.0/8 on a loopback nobody else sees, each tor's connections bound
to its host's address), else on the shared loopback (127.0.0.0/8, where
tor binds no connection, so relays see every host as 127.0.0.1).
"""

from __future__ import annotations

import functools
import os
import subprocess
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
        network = local_network()
        return replace(
            plan, hosts=tuple(replace(h, ip=local_address(h.ip, network)) for h in plan.hosts)
        )

    def outbound_bind(self) -> str | None:
        """Whose connections host_torrc binds to the host's own address."""
        if not self.local:
            return None
        return "all" if local_network() == NAMESPACE else "exit"

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


LOCAL_NETWORK_ENV = "TORNET_LOCAL_NETWORK"
NAMESPACE, LOOPBACK = "namespace", "loopback"


def local_address(ip: str, network: str = LOOPBACK) -> str:
    """100.B.H.L (the plan's address) -> 127.(100+B).H.L on the shared
    loopback (away from 127.0.0.1), 10.(100+B).H.L in a namespace."""
    first, block, high, low = (int(x) for x in ip.split("."))
    if first != 100:
        raise ValueError(f"not a planned address: {ip}")
    return f"{10 if network == NAMESPACE else 127}.{100 + block}.{high}.{low}"


def local_network() -> str:
    """Where local hosts live: ``namespace`` where this machine lets the run
    make a network namespace, else ``loopback``. TORNET_LOCAL_NETWORK picks
    one; asking for a namespace the machine refuses is an error."""
    wanted = os.environ.get(LOCAL_NETWORK_ENV, "")
    if wanted not in ("", NAMESPACE, LOOPBACK):
        raise ValueError(f"{LOCAL_NETWORK_ENV}={wanted!r}: expected {NAMESPACE!r} or {LOOPBACK!r}")
    if wanted == LOOPBACK:
        return LOOPBACK
    refused = namespace_refused()
    if wanted == NAMESPACE and refused:
        raise ValueError(f"{LOCAL_NETWORK_ENV}={NAMESPACE}: {refused}")
    return LOOPBACK if refused else NAMESPACE


def unshare_command() -> list[str]:
    """A new network namespace; a user namespace too where this is not root."""
    return ["unshare", "--net"] + ([] if os.geteuid() == 0 else ["--map-root-user"])


@functools.cache
def namespace_refused() -> str:
    """Why this machine gives a run no network namespace ('' where it does):
    it needs unshare and ip (util-linux, iproute2) and, unless root, user
    namespaces."""
    try:
        done = subprocess.run(
            [*unshare_command(), "ip", "link", "set", "lo", "up"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare failed: {exc}"
    return "" if done.returncode == 0 else f"unshare failed: {done.stderr.strip()}"
