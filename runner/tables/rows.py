"""Read the collected tables back as typed rows."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

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
