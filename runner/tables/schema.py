"""The tables every experiment has, each defined once: its row type (the
columns, typed) and its rows from a run's logs (runner.tables.definition).

``transfers``: one row per transfer a client finished; ``served``: one per
transfer a server finished (uploads end there); ``circuits``: one per
circuit built or failed; ``relays``: the relays of the last consensus;
``clients``: each client and its link; ``relay_load``: how busy each relay
was; ``process_cpu``: the CPU each program used (local backend);
``log_damage``: the logs that were missing, empty or damaged. Times are
seconds since the network started. An experiment's own tables live in its
folder (runner/experiments/); the registry hands them all to collection.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.checks import Failure
from runner.layout import SHADOW_DATA
from runner.logs import bandwidth as parse_bandwidth
from runner.logs import consensus as parse_consensus
from runner.logs import oniontrace as parse_oniontrace
from runner.logs import tgen as parse_tgen
from runner.logs.run_logs import RunLogs
from runner.logs.tgen import Transfer
from runner.manifest import HostInfo
from runner.spec.model import CLIENT_RELAY, RELAY_ROLES, client_relay_load_role
from runner.tables.definition import Table, column

SECONDS = 6  # decimals of times in seconds


@dataclass(frozen=True)
class TransferRow:
    """A transfer a client finished (or gave up on)."""

    variant: str
    seed: int
    host: str
    cls: str = column("class")
    measured: bool = column()
    size: int = column("size_bytes")
    start: float = column("start_s", digits=SECONDS)
    ttfb: float | None = column("ttfb_s", digits=SECONDS)
    ttlb: float | None = column("ttlb_s", digits=SECONDS)
    success: bool = column()
    error: str = column()
    vertex: str = column(default="")
    end: float | None = column("end_s", digits=SECONDS, default=None)
    send_bytes: int = column(default=0)
    transfer_id: str = column(default="")
    bytes_received: int = column(default=0)

    @property
    def goodput_mbit(self) -> float | None:
        """Payload bits over time to last byte, in Mbit/s."""
        if not self.success or not self.ttlb:
            return None
        return self.size * 8 / self.ttlb / 1e6


@dataclass(frozen=True)
class ServedRow:
    """A transfer as the server saw it: an upload's last byte arrives here."""

    variant: str
    seed: int
    server: str
    peer: str
    vertex: str
    bytes_received: int
    start: float = column("start_s", digits=SECONDS)
    end: float = column("end_s", digits=SECONDS)
    success: bool = column()
    size: int = column("size_bytes", default=0)


@dataclass(frozen=True)
class CircuitRow:
    """A circuit a client built or failed to build (oniontrace's CIRC events)."""

    variant: str
    seed: int
    host: str
    cls: str = column("class")
    circuit_id: str = column()
    status: str = column()
    time: float = column("time_s", digits=SECONDS)
    build: float | None = column("build_s", digits=SECONDS)
    purpose: str = column()
    conflux_id: str = column()
    guard: str = column(default="")
    streams: int = column(default=0)
    hops: int = column(default=0)
    reason: str = column(default="")
    # Every hop's relay, first hop first (older tables lack it: empty).
    path: tuple[str, ...] = column(sep=" ", default=())


@dataclass(frozen=True)
class RelayRow:
    """A relay in the last consensus the first authority made."""

    variant: str
    seed: int
    relay: str
    role: str
    flags: tuple[str, ...] = column(sep=" ")
    weight: int = column()
    measured: bool = column()
    # What the relay was told to allow each non-relay client.
    client_limit_rate: int | None = column()
    client_limit_burst: int | None = column()


@dataclass(frozen=True)
class ClientRow:
    """A client of a run: its class, link and whether it also runs a relay."""

    variant: str
    seed: int
    host: str
    cls: str = column("class")
    client_relay: bool = column()
    measured: bool = column(default=False)
    link: str = column(default="")
    bandwidth_down_bits: int = column(default=0)
    bandwidth_up_bits: int = column(default=0)

    @property
    def group(self) -> str:
        """Its class, or ``client-relay`` where it also runs a relay."""
        return CLIENT_RELAY if self.client_relay else self.cls


@dataclass(frozen=True)
class RelayLoad:
    """A relay's load over a run's measured period."""

    variant: str
    seed: int
    relay: str
    role: str
    mean: float = column("mean_utilisation", digits=4)  # utilisation over the period
    p90: float = column("p90_utilisation", digits=4)
    capacity_bytes: int = column(default=0)
    seconds: int = column(default=0)
    mean_read_bytes: int = column(default=0)
    mean_written_bytes: int = column(default=0)


@dataclass(frozen=True)
class ProcessCpu:
    """CPU seconds one program of one host used over a local run's measured
    period (none under Shadow, which simulates time, not CPU)."""

    variant: str
    seed: int
    host: str
    role: str
    program: str
    cpu_s: float


@dataclass(frozen=True)
class LogDamageRow:
    """A log that was missing, empty or had lines that could not be read."""

    variant: str
    seed: int
    log: str
    skipped_lines: int
    lost_records: int
    missing: bool
    empty: bool
    examples: str

    @property
    def matters(self) -> bool:
        """Whether the tables may miss records because of it."""
        return bool(self.lost_records or self.missing or self.empty)

    def failure(self) -> Failure:
        if self.missing:
            message = "log missing"
        elif self.empty:
            message = "log empty"
        else:
            message = (
                f"{self.skipped_lines} damaged line{'' if self.skipped_lines == 1 else 's'} "
                f"skipped, {self.lost_records} of them records ({self.examples})"
            )
        return Failure(self.variant, self.seed, "log-damage", message, self.log)


def _run(logs: RunLogs) -> dict[str, Any]:
    """The fields that name a run."""
    return {"variant": logs.run.variant, "seed": logs.run.seed}


def _client_logs(logs: RunLogs, program: str) -> Iterator[tuple[dict[str, Any], Path]]:
    """Each client's logs of ``program``, with the fields that name the client."""
    for host, info in sorted(logs.run.hosts.items()):
        if info["role"] != "client":
            continue
        who = _run(logs) | {"host": host, "cls": info["class"]}
        for log in logs.of(host, program):
            yield who | {"measured": bool(info["measured"])}, log


def _tgen_transfers(logs: RunLogs, log: Path) -> list[Transfer]:
    """A tgen log's finished transfers; lines that do not parse are skipped."""
    lines = logs.lines(log, parse_tgen.RECORD_MARKERS)
    return list(parse_tgen.parse_lines(lines, logs.on_error(log)))


def transfer_rows(logs: RunLogs) -> Iterator[TransferRow]:
    epoch = logs.run.clock_epoch
    for who, log in _client_logs(logs, "tgen"):
        for t in _tgen_transfers(logs, log):
            yield TransferRow(
                **who,
                transfer_id=t.transfer_id,
                vertex=t.vertex,
                size=t.size,
                bytes_received=t.bytes_received,
                send_bytes=t.send_size,
                start=t.start - epoch,
                end=t.end - epoch,
                ttfb=t.ttfb,
                ttlb=t.ttlb,
                success=t.success,
                error=t.error,
            )


def served_rows(logs: RunLogs) -> Iterator[ServedRow]:
    """What the servers finished: an upload's last byte arrives there."""
    epoch = logs.run.clock_epoch
    for host, info in sorted(logs.run.hosts.items()):
        if info["role"] != "server":
            continue
        for log in logs.of(host, "tgen"):
            for t in _tgen_transfers(logs, log):
                yield ServedRow(
                    **_run(logs),
                    server=host,
                    peer=t.peer,
                    vertex=t.vertex,
                    size=t.size,
                    bytes_received=t.bytes_received,
                    start=t.start - epoch,
                    end=t.end - epoch,
                    success=t.success,
                )


def tor_log_paths(logs: RunLogs) -> Iterator[tuple[str, str, Path]]:
    """(host, role, path) of the stdout log of every tor host of a run."""
    for host, info in sorted(logs.run.hosts.items()):
        if info["role"] == "server":
            continue
        for log in logs.of(host, "tor"):
            yield host, info["role"], log


def tor_logs(logs: RunLogs) -> Iterator[tuple[str, str, Iterator[str]]]:
    """(host, role, lines) for the stdout log of every tor host of a run,
    the lines that hold one of the record markers the tables declared."""
    for host, role, log in tor_log_paths(logs):
        yield host, role, logs.lines(log, logs.record_markers.get("tor", ()))


def circuit_rows(logs: RunLogs) -> Iterator[CircuitRow]:
    epoch = logs.run.clock_epoch
    for who, log in _client_logs(logs, "oniontrace"):
        del who["measured"]
        lines = logs.lines(log, parse_oniontrace.RECORD_MARKERS)
        for c in parse_oniontrace.parse_lines(lines, logs.on_error(log)):
            yield CircuitRow(
                **who,
                circuit_id=c.circuit_id,
                status=c.status,
                time=c.time - epoch,
                build=c.build_time,
                purpose=c.purpose,
                hops=c.hops,
                reason=c.reason,
                conflux_id=c.conflux_id,
                guard=c.guard,
                streams=c.streams,
                path=c.path,
            )


def relay_rows(logs: RunLogs) -> Iterator[RelayRow]:
    """The relays of the last consensus the first authority made."""
    hosts = logs.run.hosts
    authority = next((h for h, info in sorted(hosts.items()) if info["role"] == "authority"), None)
    if authority is None:
        return
    consensus = logs.run_dir / SHADOW_DATA / "hosts" / authority / "cached-consensus"
    if not consensus.is_file():
        return
    lines = logs.lines(consensus, parse_consensus.RECORD_MARKERS)
    for relay in parse_consensus.parse_consensus(lines, logs.on_error(consensus)):
        limit = hosts.get(relay.nickname, {}).get("client_limit") or {}
        yield RelayRow(
            **_run(logs),
            relay=relay.nickname,
            role=hosts.get(relay.nickname, {}).get("role", ""),
            flags=tuple(sorted(relay.flags)),
            weight=relay.bandwidth,
            measured=relay.measured,
            client_limit_rate=limit.get("rate_bytes"),
            client_limit_burst=limit.get("burst_bytes"),
        )


def client_rows(logs: RunLogs) -> Iterator[ClientRow]:
    """Each client of a run: its class, link and whether it also runs a relay."""
    for host, info in sorted(logs.run.hosts.items()):
        if info["role"] != "client":
            continue
        yield ClientRow(
            **_run(logs),
            host=host,
            cls=info["class"],
            measured=bool(info["measured"]),
            link=info.get("link") or "",
            client_relay=bool(info.get("client_relay")),
            bandwidth_down_bits=int(info["bandwidth_down_bits"]),
            bandwidth_up_bits=int(info["bandwidth_up_bits"]),
        )


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def load_role(info: HostInfo) -> str | None:
    """The role a host's load is counted under: its relay role, or for a
    client that also runs a relay ``client-relay-<position>``; None for
    hosts that relay nothing."""
    if info["role"] in RELAY_ROLES:
        return str(info["role"])
    if info.get("client_relay"):
        return client_relay_load_role(info.get("client_relay_as") or "middle")
    return None


def relay_load_rows(logs: RunLogs) -> Iterator[RelayLoad]:
    """How busy each relay was over the measured period, from the bytes its
    tor read and wrote each second (oniontrace's BW events): a second's
    utilisation is the larger of the bytes read over the link's download
    capacity and the bytes written over its upload capacity
    (``capacity_bytes``). A client relay's own traffic is in its figures
    too: its downloads are read over its (faster) downlink, so they are
    held against that link and not its uplink; and since a testing network
    counts loopback bytes (CountPrivateBandwidth), what it writes to its
    own tgen counts as written, so its figures are an upper bound."""
    begin = logs.run.clock_epoch + logs.run.bootstrap_s
    end = begin + logs.run.measure_s
    for host, info in sorted(logs.run.hosts.items()):
        role = load_role(info)
        if role is None:
            continue
        capacity = int(info["bandwidth_up_bits"]) // 8
        capacity_down = int(info.get("bandwidth_down_bits") or info["bandwidth_up_bits"]) // 8
        seconds = []
        for log in logs.of(host, "oniontrace"):
            lines = logs.lines(log, parse_bandwidth.RECORD_MARKERS)
            seconds += [
                s
                for s in parse_bandwidth.parse_lines(lines, logs.on_error(log))
                if begin <= s.time < end
            ]
        if not seconds or capacity <= 0 or capacity_down <= 0:
            continue
        used = [max(s.read / capacity_down, s.written / capacity) for s in seconds]
        yield RelayLoad(
            **_run(logs),
            relay=host,
            role=role,
            capacity_bytes=capacity,
            seconds=len(seconds),
            mean_read_bytes=round(sum(s.read for s in seconds) / len(seconds)),
            mean_written_bytes=round(sum(s.written for s in seconds) / len(seconds)),
            mean=sum(used) / len(used),
            p90=_p90(used),
        )


def process_cpu_rows(logs: RunLogs) -> Iterator[ProcessCpu]:
    """The CPU seconds each host's programs used over the measured period,
    as the local backend recorded them in the run's record (none under Shadow)."""
    for host, programs in sorted(logs.run.process_cpu_s.items()):
        role = logs.run.hosts.get(host, {}).get("role", "")
        for program, seconds in sorted(programs.items()):
            yield ProcessCpu(
                **_run(logs), host=host, role=role, program=program, cpu_s=float(seconds)
            )


def log_damage_rows(logs: RunLogs) -> Iterator[LogDamageRow]:
    for d in logs.damaged():
        yield LogDamageRow(
            **_run(logs),
            log=d.log,
            skipped_lines=d.skipped,
            lost_records=d.lost,
            missing=d.missing,
            empty=d.empty,
            examples=" | ".join(d.examples),
        )


TRANSFERS = Table("transfers", TransferRow, transfer_rows)
SERVED = Table("served", ServedRow, served_rows)
CIRCUITS = Table("circuits", CircuitRow, circuit_rows)
RELAYS = Table("relays", RelayRow, relay_rows)
CLIENTS = Table("clients", ClientRow, client_rows)
RELAY_LOAD = Table("relay_load", RelayLoad, relay_load_rows)
PROCESS_CPU = Table("process_cpu", ProcessCpu, process_cpu_rows)
# Every experiment's, and known only once every other table has read its logs.
LOG_DAMAGE = Table("log_damage", LogDamageRow, log_damage_rows)


def read_log_damage(path: Path) -> list[LogDamageRow] | None:
    """The damaged logs of every run; None where collection predates the table."""
    return LOG_DAMAGE.read(path) if path.is_file() else None
