"""A phase of the rounds model: several streams started together, such as a
page's parallel fetches, a file uploaded over several connections, or
several downloads at once. Written in a spec as
``"<name>: <streams> x <size> <down|up>"``; a video loaded in range
requests over a few connections as
``"<name>: <streams> x <size> down over <connections>"``: the streams are
split among the connections, each connection's one after another."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from runner.units import parse_size

_PHASE = re.compile(
    r"^\s*([a-z][a-z0-9]{0,15})\s*:\s*(\d+)\s*x\s*(.+?)\s+(down|up)(?:\s+over\s+(\d+))?\s*$"
)
MAX_STREAMS = 64


@dataclass(frozen=True)
class Phase:
    name: str
    streams: int
    size: int  # bytes each stream moves in its direction
    direction: str  # "down": the server sends; "up": the client sends
    # Connections the streams are split among, each running its share one
    # after another (range requests); 0: every stream at once.
    over: int = 0

    @property
    def lanes(self) -> int:
        """How many streams run at once: each starts a chain of requests."""
        return self.over or self.streams

    def lane_requests(self, lane: int) -> int:
        """How many streams lane ``lane`` runs in turn (the first lanes take
        one more where the streams do not split evenly)."""
        whole, extra = divmod(self.streams, self.lanes)
        return whole + (1 if lane < extra else 0)


def parse_phase(value: Any) -> Phase:
    if not isinstance(value, str):
        raise ValueError(f"expected a phase such as 'video: 16 x 256 KiB down', got {value!r}")
    match = _PHASE.match(value)
    if not match:
        raise ValueError(
            "expected '<name>: <streams> x <size> <down|up>' with a lower-case name, "
            "optionally followed by 'over <connections>' (downloads only), "
            f"such as 'video: 16 x 256 KiB down' or 'video: 24 x 1 MiB down over 4', got {value!r}"
        )
    name, streams, size, direction, over = match.groups()
    count = int(streams)
    if not 1 <= count <= MAX_STREAMS:
        raise ValueError(f"expected 1 to {MAX_STREAMS} streams in a phase, got {count}")
    connections = int(over) if over is not None else 0
    if over is not None and direction != "down":
        raise ValueError(f"expected 'over <connections>' on a download phase only, got {value!r}")
    if over is not None and not 1 <= connections <= count:
        raise ValueError(
            f"expected 1 to {count} connections for {count} streams after 'over', got {value!r}"
        )
    return Phase(name, count, parse_size(size), direction, connections)
