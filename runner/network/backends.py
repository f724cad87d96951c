"""What differs between running a network under Shadow and as local processes.

Under Shadow every host has its own loopback and the clock starts in 2000.
Locally every host shares this machine and certificates are made for
today's clock. Each host gets its own address and binds its SOCKS port
there: in a network namespace of the run's own where the machine allows
one (10.0.0.0/8 on a loopback nobody else sees, each tor's connections bound
to its host's address), else on the shared loopback (127.0.0.0/8, where
tor binds no connection, so relays see every host as 127.0.0.1).

A backend is a ``Backend``: what network generation, the runner, the
command line and the report ask of it. How it runs a generated network is
the execution stage's (``runner.execute.execution``). The command line reads
this module before it loads a spec, so what pulls in the network plan (and
with it networkx) is imported where it is used.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import yaml

if TYPE_CHECKING:
    from runner.network.plan import Host, NetworkPlan
    from runner.network.schedule import Process
    from runner.network.torrc import Ports
    from runner.spec.model import Spec

SHADOW_EPOCH = 946684800  # 2000-01-01 00:00:00 UTC, Shadow's simulated start
# Authority certificates under Shadow, made a month before its clock starts.
SHADOW_CERT_TIME = "1999-12-01 00:00:00"
LOCAL_CONTROL_PORT_BASE = 29051
PROCESSES = "processes.json"  # the local backend's list of processes, in a run directory


class Backend(ABC):
    """How a generated network runs, as network generation, the runner, the
    command line and the report see it. A new backend subclasses this
    (docs/backends.md, "Adding a backend")."""

    name: ClassVar[str]  # as --backend and the manifests say it
    results_suffix: ClassVar[str]  # its runs land in results/<exp><suffix>/
    # A simulated network on a simulated clock, whose timings model the
    # network; else real processes in real time, whose timings depend on this
    # machine and show only that the network works.
    simulated: ClassVar[bool]
    # Its hosts share this machine with everything else on it: control ports
    # take only a controller that reads the cookie, exits reach only the
    # network's servers, and the spec's exposure is checked.
    shares_machine: ClassVar[bool]
    cert_time: ClassVar[str | None]  # faketime for authority certificates; None: now
    # Seconds between consensuses. In real time a first consensus made before
    # the relays registered would leave clients waiting a whole interval.
    voting_interval: ClassVar[int]
    # Where the run's clock starts, as the manifest records it at generation
    # (0: the run records it when it starts).
    clock_epoch: ClassVar[int]
    programs: ClassVar[tuple[str, ...]]  # what a run needs (runner.tools.prereqs)
    optional_programs: ClassVar[tuple[str, ...]] = ()  # used where present
    # Size check (runner.network.capacity): the default ceiling of hosts per
    # run; peak resident memory of a helper process (tgen, oniontrace or the
    # local stand-ins) and of the backend itself per run, measured on
    # ci-small (bench/results.md, "Memory per process") and rounded up.
    max_hosts: ClassVar[int]
    helper_mib: ClassVar[int]
    own_mib: ClassVar[int]
    # A tor's memory by role (authority, relay, client), and the backend's
    # own per host (runner.network.capacity; bench/results.md).
    tor_mib: ClassVar[dict[str, int]]
    host_mib: ClassVar[int] = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def experiment_name(self, spec_name: str) -> str:
        """Runs of each backend land apart: results/<exp>/ and results/<exp>-local/."""
        return spec_name + self.results_suffix

    @abstractmethod
    def measure(self, spec: Spec, variant: str | None = None) -> float:
        """Seconds of traffic a run of ``variant`` measures (None: the spec's)."""

    @abstractmethod
    def plan(self, plan: NetworkPlan) -> NetworkPlan:
        """The plan with the addresses this backend uses."""

    @abstractmethod
    def host_network(self) -> str | None:
        """Where the hosts live, as the manifest records it (``local_network``)."""

    @abstractmethod
    def outbound_bind(self) -> str | None:
        """Whose connections host_torrc binds to the host's own address."""

    @abstractmethod
    def socks_bind(self, host: Host) -> str:
        """Where a client's SOCKS port listens."""

    @abstractmethod
    def ports(self, index: int) -> Ports:
        """The ports of the index-th host (from 0)."""

    @abstractmethod
    def server_port(self, port: int) -> int:
        """The port the servers listen on, for the spec's ``port``."""

    @abstractmethod
    def v3bw_time(self) -> int:
        """The timestamp of the authorities' bandwidth files."""

    @abstractmethod
    def warnings(self, spec: Spec) -> list[str]:
        """What to tell the user before running ``spec`` here."""

    @abstractmethod
    def write_processes(
        self,
        directory: Path,
        plan: NetworkPlan,
        processes: dict[str, list[Process]],
        programs: dict[str, str],
        spec: Spec,
        seed: int,
        parallelism: int,
        variant: str | None = None,
    ) -> None:
        """Write into the run ``directory`` which processes each host runs, and when."""


def _ports(control_port: int | None = None) -> Ports:
    # torrc reads the network plan (and networkx) in: imported here, when used.
    from runner.network.torrc import Ports

    return Ports() if control_port is None else Ports(control_port=control_port)


class ShadowBackend(Backend):
    """A simulated network under Shadow: every host has its own loopback and
    the clock starts in 2000."""

    name = "shadow"
    results_suffix = ""
    simulated = True
    shares_machine = False
    cert_time = SHADOW_CERT_TIME
    voting_interval = 60
    clock_epoch = SHADOW_EPOCH
    programs = ("tor", "tor-gencert", "faketime", "shadow", "tgen", "oniontrace")
    max_hosts = 5000
    # Proportional set sizes (shared pages split among the processes that
    # share them) of a 615-host run, rounded up with headroom: a client tor
    # 1.5 MiB, tgen 0.8, oniontrace 0.3, Shadow 1.0 GiB; the sum of resident
    # sizes counts the shared libraries once per process, some nine times
    # what the run took (bench/results.md, "Memory per process").
    helper_mib = 2
    own_mib = 256  # Shadow itself
    host_mib = 2  # Shadow's own per host
    tor_mib = {"authority": 64, "relay": 96, "client": 4}

    def measure(self, spec: Spec, variant: str | None = None) -> float:
        """Seconds of traffic: ``variant``'s own where its clients end after
        their cycles (None: the spec's)."""
        return spec.duration.measure if variant is None else spec.measure_of(variant)

    def plan(self, plan: NetworkPlan) -> NetworkPlan:
        return plan

    def host_network(self) -> str | None:
        return None

    def outbound_bind(self) -> str | None:
        return None

    def socks_bind(self, host: Host) -> str:
        return "127.0.0.1"

    def ports(self, index: int) -> Ports:
        return _ports()

    def server_port(self, port: int) -> int:
        return port

    def v3bw_time(self) -> int:
        return SHADOW_EPOCH + 1

    def warnings(self, spec: Spec) -> list[str]:
        return []  # Shadow's simulated network reaches nothing else

    def write_processes(
        self,
        directory: Path,
        plan: NetworkPlan,
        processes: dict[str, list[Process]],
        programs: dict[str, str],
        spec: Spec,
        seed: int,
        parallelism: int,
        variant: str | None = None,
    ) -> None:
        from runner.network.shadow_config import shadow_config

        config = shadow_config(
            plan,
            processes,
            programs,
            spec.duration.bootstrap,
            spec.duration.bootstrap + self.measure(spec, variant),
            seed,
            parallelism,
        )
        (directory / "shadow.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


class LocalBackend(Backend):
    """Real tor processes on this machine, in real time (runner.execute.local)."""

    name = "local"
    results_suffix = "-local"
    simulated = False
    shares_machine = True
    cert_time = None
    voting_interval = 20
    clock_epoch = 0
    programs = ("tor", "tor-gencert", "faketime")
    # tgen where it is installed, else the built-in driver; always its own
    # event logger (local control ports need a cookie that oniontrace cannot send).
    optional_programs = ("tgen",)
    max_hosts = 200
    helper_mib = 48  # the Python driver is the largest
    own_mib = 0
    tor_mib = {"authority": 64, "relay": 96, "client": 24}

    def measure(self, spec: Spec, variant: str | None = None) -> float:
        # Real time: clients that end after their cycles end sooner.
        return spec.duration.local_measure

    def plan(self, plan: NetworkPlan) -> NetworkPlan:
        network = local_network()
        return replace(
            plan, hosts=tuple(replace(h, ip=local_address(h.ip, network)) for h in plan.hosts)
        )

    def host_network(self) -> str | None:
        return local_network()

    def outbound_bind(self) -> str | None:
        return "all" if local_network() == NAMESPACE else "exit"

    def socks_bind(self, host: Host) -> str:
        return host.ip

    def ports(self, index: int) -> Ports:
        # Control ports sit on 127.0.0.1, where oniontrace connects, so
        # locally each host needs its own.
        return _ports(LOCAL_CONTROL_PORT_BASE + index)

    def server_port(self, port: int) -> int:
        # Ports below 1024 need privileges a local user may not have.
        return port if port >= 1024 else 10000 + port

    def v3bw_time(self) -> int:
        return int(time.time())

    def warnings(self, spec: Spec) -> list[str]:
        # The exposure check reads the spec's model (and networkx) in.
        from runner.network.exposure import check_exposure

        return check_exposure(spec, shared_loopback=local_network() != NAMESPACE)

    def write_processes(
        self,
        directory: Path,
        plan: NetworkPlan,
        processes: dict[str, list[Process]],
        programs: dict[str, str],
        spec: Spec,
        seed: int,
        parallelism: int,
        variant: str | None = None,
    ) -> None:
        listing = {
            name: [
                {
                    "program": p.program,
                    "args": list(p.args),
                    "start_s": p.start,
                    "stop_s": p.stop,
                    **({"ends": True} if p.ends else {}),
                }
                for p in procs
            ]
            for name, procs in processes.items()
        }
        (directory / PROCESSES).write_text(json.dumps(listing, indent=2) + "\n")


SHADOW = ShadowBackend()
LOCAL = LocalBackend()
# Every backend, by name: the one list of them. The command line's --backend
# takes these names and runner.execute.by_backend finds each one's execution.
BACKENDS: dict[str, Backend] = {b.name: b for b in (SHADOW, LOCAL)}


def backend_named(name: object) -> Backend:
    """The backend a manifest names; Shadow where it names none known (a
    report with no complete run reads as Shadow's)."""
    return BACKENDS.get(str(name), SHADOW)


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
