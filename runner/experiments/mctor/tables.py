"""MCTor's table: ``placements.csv``, one row per circuit that a tor with
MCTorConnections placed on a connection (tor-patches/0003)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.experiments.mctor import placement_log as parse_mctor
from runner.experiments.mctor.placement_log import read_fingerprint
from runner.layout import SHADOW_DATA
from runner.logs.run_logs import RunLogs
from runner.tables.schema import Table, round6, tor_logs

PLACEMENT_COLUMNS = [
    "variant",
    "seed",
    "host",
    "peer",
    "time_s",
    "connection",
    "open_connections",
    "usable_connections",
    "circuits",
    "circuit_id",  # the next three are empty from builds that logged no IDs
    "origin",
    "from_id",
]


def _nicknames(run_dir: Path, manifest: dict[str, Any]) -> dict[str, str]:
    """Relay fingerprint -> host name, from the fingerprint files tor wrote."""
    names = {}
    for host in manifest["hosts"]:
        path = run_dir / SHADOW_DATA / "hosts" / host / "fingerprint"
        if path.is_file():
            names[read_fingerprint(path.read_text())[1]] = host
    return names


def placement_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    """MCTor's placement log lines of every tor host (none unless it was on)."""
    manifest = logs.manifest
    names = _nicknames(logs.run_dir, manifest)
    for host, _role, lines in tor_logs(logs):
        for p in parse_mctor.parse_lines(lines):
            yield {
                "variant": manifest["variant"],
                "seed": manifest["seed"],
                "host": host,
                "peer": names.get(p.peer, "$" + p.peer),
                "time_s": round6(p.time),
                "connection": p.connection,
                "open_connections": p.open_connections,
                "usable_connections": p.usable_connections,
                "circuits": ";".join(f"{c}:{n}" for c, n in sorted(p.circuits.items())),
                "circuit_id": _blank(p.circuit_id),
                "origin": _blank(p.origin),
                "from_id": _blank(p.from_id),
            }


PLACEMENTS = Table("placements", PLACEMENT_COLUMNS, placement_rows, parse_mctor.RECORD_MARKERS)


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


def _blank(value: int | None) -> str | int:
    return "" if value is None else value
