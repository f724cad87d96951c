"""Run a generated network as real processes on this machine.

The run directory gets the same layout as under Shadow
(``shadow.data/hosts/<host>/<program>.<n>.stdout``), so collection and
comparison work unchanged. Processes start in the spec's order, clients'
tors once the authorities' consensus lists every relay; clients'
traffic starts once every client's tor has bootstrapped and knows every relay
of the network (and a short settle
for circuits and multipath sets), then runs for the measurement time. There is
no link latency or bandwidth emulation here: only tor's own rate limits.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.errors import RunError
from runner.execute.local.procs import ProcessSet
from runner.layout import SHADOW_DATA, SHADOW_TEMPLATE
from runner.manifest import HostInfo, RunRecord
from runner.network.backends import PROCESSES
from runner.network.torrc import CONTROL_COOKIE
from runner.spec.model import RELAY_ROLES

BOOTSTRAP_TIMEOUT = 300.0
SETTLE = 10.0  # after bootstrap: prebuilt circuits and multipath sets link
CONTROL_PORT_TIMEOUT = 60.0


# Set by the runner when interrupted: local runs stop at their next check.
cancel = threading.Event()
SLOT_POLL = 0.5  # seconds between tries for the machine's slot


@contextmanager
def machine_slot(waiting: Callable[[str], None]) -> Iterator[Callable[[], float]]:
    """Networks on the shared loopback use fixed addresses and ports, so one
    runs on a machine at a time, whichever runner or cluster worker starts
    it. While another holds the slot, ``waiting`` is told who (its pid and
    command, which the holder writes into the lock file); an interrupted
    runner stops waiting within ``SLOT_POLL``. Yields a function that gives
    the seconds waited."""
    path = Path(tempfile.gettempdir()) / "tornet-local-network.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    started = time.monotonic()
    told = None
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = os.pread(fd, 4096, 0).decode(errors="replace").strip()
                if holder != told:
                    waiting(holder or "another runner")
                    told = holder
                if cancel.wait(SLOT_POLL):
                    raise RunError(
                        "interrupted while waiting for this machine's local network"
                    ) from None
        waited = time.monotonic() - started
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {shlex.join(sys.argv)}\n".encode(), 0)
        try:
            yield lambda: waited
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)


PROCESSES_CPU = "processes_cpu_s"  # in the phases a local run returns: its CPU seconds


def _command(
    program: str,
    args: list[str],
    host: str,
    info: HostInfo,
    programs: dict[str, str],
    home: Path,
) -> tuple[list[str], dict[str, str] | None]:
    """The command line of one process, with the built-in stand-ins where needed."""
    if program == "tor":
        return [programs["tor"], *args], None
    if program == "oniontrace":
        # Local control ports need the host's cookie, which oniontrace cannot
        # send (it sends a fixed password): the built-in event logger stands in.
        opts = _options(args)
        return [
            sys.executable,
            "-m",
            "runner.execute.local.eventlog",
            "--port",
            opts["TorControlPort"],
            "--cookie",
            str(home / CONTROL_COOKIE),
            "--events",
            opts.get("Events", "BW"),
        ], None
    if program == "tgen":
        if "tgen" in programs:
            # tgen listens on every address unless told where.
            return [programs["tgen"], *args], {"TGENIP": info["ip"]}
        return [
            sys.executable,
            "-m",
            "runner.execute.local.driver",
            *args,
            "--name",
            host,
            "--bind",
            info["ip"],
        ], None
    raise RunError(f"unknown program {program!r} in {PROCESSES}")


def _options(args: list[str]) -> dict[str, str]:
    """oniontrace's Key=Value arguments."""
    return dict(a.split("=", 1) for a in args)


def _bootstrapped(log: Path) -> bool:
    try:
        return "Bootstrapped 100%" in log.read_text(errors="replace")
    except OSError:
        return False


def _relays_known(home: Path) -> int:
    """How many relays a client's tor knows fully: listed in its consensus
    and with a microdescriptor (0 before it has either)."""
    try:
        consensus = (home / "cached-microdesc-consensus").read_text(errors="replace")
    except OSError:
        return 0
    listed = sum(line.startswith("r ") for line in consensus.splitlines())
    described = 0
    for name in ("cached-microdescs", "cached-microdescs.new"):
        try:
            text = (home / name).read_text(errors="replace")
        except OSError:
            continue
        described += sum(line.startswith("onion-key") for line in text.splitlines())
    return min(listed, described)


def consensus_lists(home: Path) -> int:
    """How many relays an authority's latest consensus lists (0 before it has one)."""
    try:
        consensus = (home / "cached-consensus").read_text(errors="replace")
    except OSError:
        return 0
    return sum(line.startswith("r ") for line in consensus.splitlines())


def wait_for_consensus(
    homes: list[Path], relays: int, timeout: float, alive: Callable[[], None]
) -> None:
    """Return once every authority's consensus lists all ``relays`` (the
    authorities counted). Clients start only then: in real time relays join
    the consensus over several voting rounds, and a client that bootstraps on
    an early one builds its first circuits and multipath sets (each leg its
    own guard and middle) from the few relays it lists."""
    deadline = time.monotonic() + timeout
    while not all(consensus_lists(home) >= relays for home in homes):
        if time.monotonic() > deadline:
            listed = ", ".join(f"{h.name} lists {consensus_lists(h)}" for h in homes)
            raise RunError(
                f"the consensus does not list all {relays} relays after {timeout:.0f} s ({listed})"
            )
        alive()
        time.sleep(0.5)


def _tail(path: Path, lines: int = 5) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def wait_for_port(port: int, timeout: float, alive: Callable[[], None]) -> None:
    """Return once 127.0.0.1:``port`` accepts connections. oniontrace dies
    (SIGPIPE) if tor's control port is not listening yet, which on a busy
    machine can take longer than the second Shadow's schedule allows."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RunError(
                    f"tor's control port {port} not listening after {timeout:.0f} s"
                ) from None
            alive()
            time.sleep(0.1)


@dataclass(frozen=True)
class LocalRan:
    """What a local run gives back: the wall time of its phases (bootstrap_s,
    traffic_s, and PROCESSES_CPU), its clock's start, each process's CPU
    over the measured period, and that period in real time from the clock's
    start (the tables read it)."""

    phases: dict[str, float]
    clock_epoch: float
    process_cpu_s: dict[str, dict[str, float]]
    bootstrap_s: float
    measure_s: float


class _Starter:
    def __init__(
        self, procs: ProcessSet, data: Path, hosts: dict[str, HostInfo], programs: dict[str, str]
    ) -> None:
        self.procs, self.data, self.hosts, self.programs = procs, data, hosts, programs
        self.counters: dict[str, int] = {}
        self.logs: dict[tuple[str, str], Path] = {}

    def start(self, host: str, entry: dict[str, Any]) -> str:
        """Start ``entry`` on ``host``; return the process's name."""
        if entry["program"] == "oniontrace":
            wait_for_port(
                int(_options(entry["args"])["TorControlPort"]),
                CONTROL_PORT_TIMEOUT,
                lambda: _check(self.procs, self.data),
            )
        number = self.counters.get(host, 1000)
        self.counters[host] = number + 1
        home = self.data / "hosts" / host
        cmd, env = _command(
            entry["program"],
            entry["args"],
            host,
            self.hosts[host],
            self.programs,
            home,
        )
        stem = f"{entry['program']}.{number}"
        self.procs.start(
            f"{host}/{stem}", cmd, home, home / f"{stem}.stdout", home / f"{stem}.stderr", env
        )
        if entry.get("ends"):
            self.procs.may_end.add(f"{host}/{stem}")
        self.logs[(host, entry["program"])] = home / f"{stem}.stdout"
        return f"{host}/{stem}"


def _check(procs: ProcessSet, data: Path) -> None:
    if cancel.is_set():
        raise RunError("interrupted")
    dead = procs.exited()
    if dead:
        name, code = dead[0]
        host, stem = name.split("/")
        tail = _tail(data / "hosts" / host / f"{stem}.stdout")
        raise RunError(f"{name} exited with status {code} during the run:\n{tail}")


# A process to start: seconds after its phase starts, its host, its entry
# of the run's processes.json.
Scheduled = tuple[float, str, dict[str, Any]]


def run_local(
    run_dir: Path,
    record: RunRecord,
    programs: dict[str, str],
    measure_s: float,
    on_progress: Callable[[int], None] | None = None,
    before_stop: Callable[[], None] | None = None,
) -> LocalRan:
    """Run the network. ``before_stop`` runs at the end of the measured
    period, while every process still runs."""
    data = _fresh_data(run_dir)
    listing: dict[str, list[dict[str, Any]]] = json.loads((run_dir / PROCESSES).read_text())
    hosts = record.hosts
    clients = [h for h, info in hosts.items() if info["role"] == "client"]
    planned_bootstrap_s = record.bootstrap_s
    early, traffic = _schedule(listing, clients, planned_bootstrap_s)
    started = time.time()
    with ProcessSet() as procs:
        starter = _Starter(procs, data, hosts, programs)
        _start_network(starter, early, clients, started)
        _wait_for_clients(starter, clients)
        bootstrap_s = time.time() - started
        _settle(procs, data)
        traffic_started = time.time()
        cpu_at_start = procs.cpu_seconds()
        _run_traffic(starter, traffic, traffic_started, measure_s, planned_bootstrap_s, on_progress)
        process_cpu_s = measured_cpu(cpu_at_start, procs.cpu_seconds())
        # Every process's CPU since it started: the run's cost on this machine.
        processes_cpu_s = round(sum(procs.cpu_seconds().values()), 3)
        if before_stop is not None:
            before_stop()
    phases = {
        "bootstrap_s": round(bootstrap_s, 3),
        "traffic_s": round(measure_s, 3),
        PROCESSES_CPU: processes_cpu_s,
    }
    # The measured period in real time, from the clock's start, as the
    # tables read it (relay_load.csv); the plan's were the simulation's.
    return LocalRan(
        phases, started, process_cpu_s, round(traffic_started - started, 3), round(measure_s, 3)
    )


def _fresh_data(run_dir: Path) -> Path:
    """The run's shadow.data, copied afresh from its template."""
    data = run_dir / SHADOW_DATA
    if data.exists():
        shutil.rmtree(data)
    shutil.copytree(run_dir / SHADOW_TEMPLATE, data)
    return data


def _schedule(
    listing: dict[str, list[dict[str, Any]]], clients: list[str], planned_bootstrap_s: float
) -> tuple[list[Scheduled], list[Scheduled]]:
    """The processes that start with the network, timed from its start, and
    the clients' traffic, timed from when traffic starts (the plan's times
    count from the simulated bootstrap's end); each in the order they start."""
    traffic = sorted(
        (
            (e["start_s"] - planned_bootstrap_s, h, e)
            for h in clients
            for e in listing[h]
            if e["program"] == "tgen"
        ),
        key=lambda item: (item[0], item[1]),
    )
    early = sorted(
        (
            (e["start_s"], h, e)
            for h, entries in listing.items()
            for e in entries
            if not (h in clients and e["program"] == "tgen")
        ),
        key=lambda item: (item[0], item[1]),
    )
    return early, traffic


def _start_network(
    starter: _Starter, early: list[Scheduled], clients: list[str], started: float
) -> None:
    """Start the network's processes at their times from ``started``; the
    first client's only once every authority's consensus lists every relay."""
    procs, data, hosts = starter.procs, starter.data, starter.hosts
    authorities = [data / "hosts" / h for h, info in hosts.items() if info["role"] == "authority"]
    network_size = sum(1 for info in hosts.values() if info["role"] in ("authority", *RELAY_ROLES))
    clients_waiting = bool(authorities)
    for offset, host, entry in early:
        while time.time() - started < offset:
            time.sleep(0.05)
        if clients_waiting and host in clients:
            wait_for_consensus(
                authorities, network_size, BOOTSTRAP_TIMEOUT, lambda: _check(procs, data)
            )
            clients_waiting = False
        starter.start(host, entry)


def _wait_for_clients(starter: _Starter, clients: list[str]) -> None:
    """Return once every client's tor has bootstrapped and knows every relay
    of the network; RunError after BOOTSTRAP_TIMEOUT."""
    procs, data = starter.procs, starter.data
    deadline = time.monotonic() + BOOTSTRAP_TIMEOUT
    # Every relay of the network, the authorities included (each has keys).
    relays = sum(1 for _ in (data / "hosts").glob("*/fingerprint"))

    def ready(client: str) -> bool:
        # Bootstrapped, and knowing every relay: in real time relays
        # register over several consensuses, and a client that starts on
        # an early one builds its paths (and multipath legs, each with its
        # own guard and middle) from a few relays only.
        return _bootstrapped(starter.logs[(client, "tor")]) and (
            _relays_known(data / "hosts" / client) >= relays
        )

    while not all(ready(c) for c in clients):
        _check(procs, data)
        if time.monotonic() > deadline:
            waiting = [
                f"{c} (knows {_relays_known(data / 'hosts' / c)} of {relays} relays)"
                for c in clients
                if not ready(c)
            ]
            raise RunError(
                f"clients not bootstrapped on the whole network after "
                f"{BOOTSTRAP_TIMEOUT:.0f} s: {', '.join(waiting)}"
            )
        time.sleep(0.5)


def _settle(procs: ProcessSet, data: Path) -> None:
    """Wait SETTLE seconds, watching the processes, for prebuilt circuits and
    multipath sets to link before traffic starts."""
    settle_until = time.monotonic() + SETTLE
    while time.monotonic() < settle_until:
        _check(procs, data)
        time.sleep(0.5)


def _run_traffic(
    starter: _Starter,
    traffic: list[Scheduled],
    traffic_started: float,
    measure_s: float,
    planned_bootstrap_s: float,
    on_progress: Callable[[int], None] | None,
) -> None:
    """Start and stop the clients' traffic at its times for ``measure_s``
    seconds from ``traffic_started``, watching the processes and telling the
    progress."""
    procs, data = starter.procs, starter.data
    pending = list(traffic)
    running: list[tuple[float, str]] = []  # (stop offset, process name)
    while (elapsed := time.time() - traffic_started) < measure_s:
        while pending and pending[0][0] <= elapsed:
            _, host, entry = pending.pop(0)
            name = starter.start(host, entry)
            if entry.get("stop_s") is not None:
                running.append((entry["stop_s"] - planned_bootstrap_s, name))
        for offset, name in [r for r in running if r[0] <= elapsed]:
            procs.stop(name)
            running.remove((offset, name))
        _check(procs, data)
        if on_progress is not None:
            on_progress(int(100 * elapsed / measure_s))
        time.sleep(1.0)


def measured_cpu(start: dict[str, float], end: dict[str, float]) -> dict[str, dict[str, float]]:
    """host -> program -> CPU seconds used over the measured period by the
    processes still running at its end (real CPU time: the local backend's
    processes run on this machine's cores, where Shadow's only simulate
    time). A process started during the period counts from zero."""
    used: dict[str, dict[str, float]] = {}
    for name, seconds in end.items():
        host, _, stem = name.partition("/")
        program = stem.partition(".")[0]
        per_host = used.setdefault(host, {})
        per_host[program] = round(per_host.get(program, 0.0) + seconds - start.get(name, 0.0), 3)
    return used
