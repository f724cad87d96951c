"""MCTor's table: ``placements``, one row per circuit that a tor with
MCTorConnections placed on a connection (tor-patches/0003)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from runner.experiments.mctor import placement_log as parse_mctor
from runner.experiments.mctor.placement_log import read_fingerprint
from runner.layout import SHADOW_DATA
from runner.logs.run_logs import RunLogs
from runner.tables.definition import Table, column
from runner.tables.schema import SECONDS, tor_logs


@dataclass(frozen=True)
class PlacementRow:
    """A circuit that a tor with MCTorConnections placed on a connection."""

    variant: str
    seed: int
    host: str
    peer: str
    time: float = column("time_s", digits=SECONDS)
    connection: int = column()
    open_connections: int = column()
    usable_connections: int = column()  # open ones that still take new circuits
    circuits: tuple[int, ...] = column()  # outbound circuits on each open connection
    # These three are empty from builds that logged no IDs.
    circuit_id: int | None = column(default=None)  # the circuit's new ID on this connection
    origin: int | None = column(default=None)  # a client's circuit: its global identifier
    from_id: int | None = column(default=None)  # a relay's circuit: the ID it arrived with


def _nicknames(run_dir: Path, hosts: Iterable[str]) -> dict[str, str]:
    """Relay fingerprint -> host name, from the fingerprint files tor wrote."""
    names = {}
    for host in hosts:
        path = run_dir / SHADOW_DATA / "hosts" / host / "fingerprint"
        if path.is_file():
            names[read_fingerprint(path.read_text())[1]] = host
    return names


def placement_rows(logs: RunLogs) -> Iterator[PlacementRow]:
    """MCTor's placement log lines of every tor host (none unless it was on)."""
    names = _nicknames(logs.run_dir, logs.run.hosts)
    for host, _role, lines in tor_logs(logs):
        for p in parse_mctor.parse_lines(lines):
            yield PlacementRow(
                variant=logs.run.variant,
                seed=logs.run.seed,
                host=host,
                peer=names.get(p.peer, "$" + p.peer),
                time=p.time,
                connection=p.connection,
                open_connections=p.open_connections,
                usable_connections=p.usable_connections,
                circuits=tuple(n for _, n in sorted(p.circuits.items())),
                circuit_id=p.circuit_id,
                origin=p.origin,
                from_id=p.from_id,
            )


PLACEMENTS = Table("placements", PlacementRow, placement_rows, parse_mctor.RECORD_MARKERS)
