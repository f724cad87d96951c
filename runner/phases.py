"""A phase of the rounds model: several streams started together, such as a
page's parallel fetches, a file uploaded over several connections, or
several downloads at once. Written in a spec as
``"<name>: <streams> x <size> <down|up>"``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from runner.units import parse_size

_PHASE = re.compile(r"^\s*([a-z][a-z0-9]{0,15})\s*:\s*(\d+)\s*x\s*(.+?)\s+(down|up)\s*$")
MAX_STREAMS = 64


@dataclass(frozen=True)
class Phase:
    name: str
    streams: int
    size: int  # bytes each stream moves in its direction
    direction: str  # "down": the server sends; "up": the client sends


def parse_phase(value: Any) -> Phase:
    if not isinstance(value, str):
        raise ValueError(f"expected a phase such as 'video: 16 x 256 KiB down', got {value!r}")
    match = _PHASE.match(value)
    if not match:
        raise ValueError(
            "expected '<name>: <streams> x <size> <down|up>' with a lower-case name, "
            f"such as 'video: 16 x 256 KiB down', got {value!r}"
        )
    name, streams, size, direction = match.groups()
    count = int(streams)
    if not 1 <= count <= MAX_STREAMS:
        raise ValueError(f"expected 1 to {MAX_STREAMS} streams in a phase, got {count}")
    return Phase(name, count, parse_size(size), direction)
