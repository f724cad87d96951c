"""Parse the circuit placements that tor logs with MCTorConnections set
(tor-patches/0003): on which connection a circuit went, how many
connections to that relay were open, how many of those still took new
circuits, and how many circuits each carried."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_LINE = re.compile(
    r"^\w{3} (\d{2}) (\d{2}):(\d{2}):(\d{2}(?:\.\d+)?) \[notice\] MCTor: circuit placed on "
    r"connection (\d+) to \$([0-9A-F]{40}); open connections: (\d+); usable: (\d+); "
    r"outbound circuits: ([0-9:,]*)\s*$"
)

RECORD_MARKERS = ("MCTor: circuit placed",)  # a damaged one lost a placement


@dataclass(frozen=True)
class Placement:
    time: float  # seconds since the first day of the log's clock began
    connection: int  # tor's channel identifier
    peer: str  # the relay's RSA fingerprint
    open_connections: int
    usable_connections: int  # open ones that still take new circuits
    circuits: dict[int, int]  # open connection -> outbound circuits on it


def parse_line(line: str) -> Placement | None:
    match = _LINE.match(line)
    if not match:
        return None
    day, hours, minutes, seconds, connection, peer, open_count, usable, counts = match.groups()
    circuits = {}
    for item in filter(None, counts.split(",")):
        chan, _, count = item.partition(":")
        circuits[int(chan)] = int(count)
    return Placement(
        time=(int(day) - 1) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds),
        connection=int(connection),
        peer=peer,
        open_connections=int(open_count),
        usable_connections=int(usable),
        circuits=circuits,
    )


def parse_lines(lines: Iterable[str]) -> Iterator[Placement]:
    for line in lines:
        placement = parse_line(line)
        if placement is not None:
            yield placement


def read_fingerprint(text: str) -> tuple[str, str]:
    """(nickname, fingerprint) from the ``fingerprint`` file tor writes."""
    nickname, _, fingerprint = text.strip().partition(" ")
    return nickname, fingerprint.replace(" ", "")
