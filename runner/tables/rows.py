"""Read the collected tables back as typed rows."""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TypeVar

from runner.logs.hop_feedback import HopFeedbackTotals
from runner.logs.hop_window import HopWindowTotals
from runner.logs.n23 import N23Totals

T = TypeVar("T")


@dataclass(frozen=True)
class TransferRow:
    variant: str
    seed: int
    host: str
    cls: str
    measured: bool
    size: int
    start: float
    ttfb: float | None
    ttlb: float | None
    success: bool
    error: str
    vertex: str = ""
    end: float | None = None
    send_bytes: int = 0

    @property
    def goodput_mbit(self) -> float | None:
        """Payload bits over time to last byte, in Mbit/s."""
        if not self.success or not self.ttlb:
            return None
        return self.size * 8 / self.ttlb / 1e6


@dataclass(frozen=True)
class CircuitRow:
    variant: str
    seed: int
    host: str
    cls: str
    circuit_id: str
    status: str
    time: float
    build: float | None
    purpose: str
    conflux_id: str
    guard: str = ""
    streams: int = 0


def _float(text: str) -> float | None:
    return float(text) if text not in ("", None) else None


def read_transfers(path: Path) -> list[TransferRow]:
    with path.open(newline="") as handle:
        return [
            TransferRow(
                variant=r["variant"],
                seed=int(r["seed"]),
                host=r["host"],
                cls=r["class"],
                measured=r["measured"] == "1",
                size=int(r["size_bytes"]),
                start=float(r["start_s"]),
                ttfb=_float(r["ttfb_s"]),
                ttlb=_float(r["ttlb_s"]),
                success=r["success"] == "1",
                error=r["error"],
                vertex=r.get("vertex", ""),
                end=_float(r.get("end_s", "")),
                send_bytes=int(r.get("send_bytes") or 0),
            )
            for r in csv.DictReader(handle)
        ]


@dataclass(frozen=True)
class ServedRow:
    """A transfer as the server saw it: an upload's last byte arrives here."""

    variant: str
    seed: int
    server: str
    peer: str
    vertex: str
    bytes_received: int
    start: float
    end: float
    success: bool


def read_served(path: Path) -> list[ServedRow]:
    with path.open(newline="") as handle:
        return [
            ServedRow(
                variant=r["variant"],
                seed=int(r["seed"]),
                server=r["server"],
                peer=r["peer"],
                vertex=r["vertex"],
                bytes_received=int(r["bytes_received"]),
                start=float(r["start_s"]),
                end=float(r["end_s"]),
                success=r["success"] == "1",
            )
            for r in csv.DictReader(handle)
        ]


@dataclass(frozen=True)
class PlacementRow:
    """A circuit that a tor with MCTorConnections placed on a connection."""

    variant: str
    seed: int
    host: str
    peer: str
    time: float
    connection: int
    open_connections: int
    usable_connections: int  # open ones that still take new circuits
    circuits: tuple[int, ...]  # outbound circuits on each open connection
    circuit_id: int | None = None  # the circuit's new ID on this connection
    origin: int | None = None  # a client's circuit: its global identifier
    from_id: int | None = None  # a relay's circuit: the ID it arrived with


def _optional_int(text: str | None) -> int | None:
    return int(text) if text else None


def read_placements(path: Path) -> list[PlacementRow]:
    with path.open(newline="") as handle:
        return [
            PlacementRow(
                variant=r["variant"],
                seed=int(r["seed"]),
                host=r["host"],
                peer=r["peer"],
                time=float(r["time_s"]),
                connection=int(r["connection"]),
                open_connections=int(r["open_connections"]),
                usable_connections=int(r["usable_connections"]),
                circuits=tuple(
                    int(item.partition(":")[2]) for item in filter(None, r["circuits"].split(";"))
                ),
                circuit_id=_optional_int(r.get("circuit_id")),
                origin=_optional_int(r.get("origin")),
                from_id=_optional_int(r.get("from_id")),
            )
            for r in csv.DictReader(handle)
        ]


@dataclass(frozen=True)
class HopFeedbackRow(HopFeedbackTotals):
    """One tor's hop feedback totals at the end of a run (tor-patches/0005);
    per-position counts run from the end that originates the feedback."""

    variant: str
    seed: int
    host: str
    role: str


def _counts(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in filter(None, text.split(";")))


def read_hop_feedback(path: Path) -> list[HopFeedbackRow]:
    """The collected hop feedback totals; none if the table is missing."""
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return [
            HopFeedbackRow(
                variant=r["variant"],
                seed=int(r["seed"]),
                host=r["host"],
                role=r["role"],
                originated=int(r["originated"]),
                delivered=int(r["delivered"]),
                dropped=int(r["dropped"]),
                decisions=int(r["decisions"]),
                with_feedback=int(r["with_feedback"]),
                feedback_larger=int(r["feedback_larger"]),
                received=_counts(r["received"]),
                forwarded=_counts(r["forwarded"]),
                larger_at=_counts(r["larger_at"]),
            )
            for r in csv.DictReader(handle)
        ]


@dataclass(frozen=True)
class N23Row(N23Totals):
    """One tor's N23 totals at the end of a run (tor-patches/0006)."""

    variant: str
    seed: int
    host: str
    role: str


def read_n23(path: Path) -> list[N23Row]:
    """The collected N23 totals; none if the table is missing."""
    return _read_totals(path, N23Totals, N23Row)


@dataclass(frozen=True)
class HopWindowRow(HopWindowTotals):
    """One tor's hop window totals at the end of a run (tor-patches/0007)."""

    variant: str
    seed: int
    host: str
    role: str


def read_hop_window(path: Path) -> list[HopWindowRow]:
    """The collected hop window totals; none if the table is missing."""
    return _read_totals(path, HopWindowTotals, HopWindowRow)


def _read_totals(path: Path, totals: type, row: Callable[..., T]) -> list[T]:
    """Rows of one tor's totals each: ``totals``' counts, then the run and
    host they belong to; none if the table is missing."""
    if not path.is_file():
        return []
    counts = [f.name for f in fields(totals)]
    with path.open(newline="") as handle:
        return [
            row(
                **{name: int(r[name]) for name in counts},
                variant=r["variant"],
                seed=int(r["seed"]),
                host=r["host"],
                role=r["role"],
            )
            for r in csv.DictReader(handle)
        ]


def read_circuits(path: Path) -> list[CircuitRow]:
    with path.open(newline="") as handle:
        return [
            CircuitRow(
                variant=r["variant"],
                seed=int(r["seed"]),
                host=r["host"],
                cls=r["class"],
                circuit_id=r["circuit_id"],
                status=r["status"],
                time=float(r["time_s"]),
                build=_float(r["build_s"]),
                purpose=r["purpose"],
                conflux_id=r["conflux_id"],
                guard=r.get("guard", ""),
                streams=int(r.get("streams") or 0),
            )
            for r in csv.DictReader(handle)
        ]


@dataclass(frozen=True)
class LogDamageRow:
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

    def describe(self) -> str:
        where = f"{self.variant}/seed-{self.seed} {self.log}"
        if self.missing:
            return f"{where}: log missing"
        if self.empty:
            return f"{where}: log empty"
        return (
            f"{where}: {self.skipped_lines} damaged line{'' if self.skipped_lines == 1 else 's'} "
            "skipped, "
            f"{self.lost_records} of them records ({self.examples})"
        )


def read_log_damage(path: Path) -> list[LogDamageRow] | None:
    """The damaged logs of every run; None where collection predates the table."""
    if not path.is_file():
        return None
    with path.open(newline="") as handle:
        return [
            LogDamageRow(
                variant=r["variant"],
                seed=int(r["seed"]),
                log=r["log"],
                skipped_lines=int(r["skipped_lines"]),
                lost_records=int(r["lost_records"]),
                missing=r["missing"] == "1",
                empty=r["empty"] == "1",
                examples=r["examples"],
            )
            for r in csv.DictReader(handle)
        ]


@dataclass(frozen=True)
class RelayLoad:
    """A relay's load over a run's measured period (relay_load.csv)."""

    variant: str
    seed: int
    relay: str
    role: str
    mean: float  # utilisation over the measured period
    p90: float


def read_relay_load(path: Path) -> list[RelayLoad]:
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return [
            RelayLoad(
                r["variant"],
                int(r["seed"]),
                r["relay"],
                r["role"],
                float(r["mean_utilisation"]),
                float(r["p90_utilisation"]),
            )
            for r in csv.DictReader(handle)
        ]


@dataclass(frozen=True)
class ProcessCpu:
    """CPU seconds one program of one host used over a local run's measured
    period (the local backend's process_cpu.csv)."""

    variant: str
    seed: int
    host: str
    role: str
    program: str
    cpu_s: float


def read_process_cpu(path: Path) -> list[ProcessCpu]:
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return [
            ProcessCpu(
                r["variant"], int(r["seed"]), r["host"], r["role"], r["program"], float(r["cpu_s"])
            )
            for r in csv.DictReader(handle)
        ]
