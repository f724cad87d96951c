"""Parse the circuit placements that tor logs with MCTorConnections set
(tor-patches/0003): on which connection a circuit went, how many
connections to that relay were open, how many of those still took new
circuits, how many circuits each carried, and which circuit it was (its
new outbound ID, and on a client its global identifier or on a relay the
ID it arrived with; older builds logged no IDs)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_LINE = re.compile(
    r"^\w{3} (\d{2}) (\d{2}):(\d{2}):(\d{2}(?:\.\d+)?) \[notice\] MCTor: circuit placed on "
    r"connection (\d+) to \$([0-9A-F]{40}); open connections: (\d+); usable: (\d+); "
    r"outbound circuits: ([0-9:,]*)"
    r"(?:; circuit ID (\d+), (?:origin (\d+)|from ID (\d+)))?\s*$"
)

RECORD_MARKERS = ("MCTor: circuit placed",)  # a damaged one lost a placement


@dataclass(frozen=True)
class CircuitPlacement:
    time: float  # seconds since the first day of the log's clock began
    connection: int  # tor's channel identifier
    peer: str  # the relay's RSA fingerprint
    open_connections: int
    usable_connections: int  # open ones that still take new circuits
    circuits: dict[int, int]  # open connection -> outbound circuits on it
    circuit_id: int | None = None  # the circuit's new ID on this connection
    origin: int | None = None  # a client's circuit: its global identifier
    from_id: int | None = None  # a relay's circuit: the ID it arrived with


def parse_line(line: str) -> CircuitPlacement | None:
    match = _LINE.match(line)
    if not match:
        return None
    (
        day,
        hours,
        minutes,
        seconds,
        connection,
        peer,
        open_count,
        usable,
        counts,
        circuit_id,
        origin,
        from_id,
    ) = match.groups()
    circuits = {}
    for item in filter(None, counts.split(",")):
        chan, _, count = item.partition(":")
        circuits[int(chan)] = int(count)
    return CircuitPlacement(
        time=(int(day) - 1) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds),
        connection=int(connection),
        peer=peer,
        open_connections=int(open_count),
        usable_connections=int(usable),
        circuits=circuits,
        circuit_id=_int(circuit_id),
        origin=_int(origin),
        from_id=_int(from_id),
    )


def _int(text: str | None) -> int | None:
    return int(text) if text is not None else None


def parse_lines(lines: Iterable[str]) -> Iterator[CircuitPlacement]:
    for line in lines:
        placement = parse_line(line)
        if placement is not None:
            yield placement


def read_fingerprint(text: str) -> tuple[str, str]:
    """(nickname, fingerprint) from the ``fingerprint`` file tor writes."""
    nickname, _, fingerprint = text.strip().partition(" ")
    return nickname, fingerprint.replace(" ", "")
