"""Parse oniontrace 1.0 logs (Mode=log) into circuit build records.

oniontrace logs each control-port event it receives as
``... Logger: 650 CIRC <id> <status> <path> ... TIME_CREATED=...``. A
circuit's first BUILT or FAILED event counts; later ones for the same id
(cannibalisation, or conflux relinking) are not build times.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_CIRC = re.compile(r"Logger: 650 CIRC (\S+) (\S+)(.*)$")
_KEYWORD = re.compile(r"\b([A-Z_]+)=(\S+)")


@dataclass(frozen=True)
class Circuit:
    circuit_id: str
    status: str  # BUILT or FAILED
    time: float  # unix seconds of the event
    build_time: float | None  # seconds from creation to this event
    purpose: str
    hops: int
    reason: str
    conflux_id: str


def _iso_to_unix(text: str) -> float:
    date, _, fraction = text.partition(".")
    seconds = calendar.timegm(
        (int(date[0:4]), int(date[5:7]), int(date[8:10]), int(date[11:13]),
         int(date[14:16]), int(date[17:19]), 0, 0, 0)
    )
    return seconds + (float(f"0.{fraction}") if fraction else 0.0)


def parse_lines(lines: Iterable[str]) -> Iterator[Circuit]:
    seen: set[str] = set()
    for line in lines:
        match = _CIRC.search(line)
        if not match:
            continue
        circ_id, status, rest = match.groups()
        if status not in ("BUILT", "FAILED") or circ_id in seen:
            continue
        seen.add(circ_id)
        keywords = dict(_KEYWORD.findall(rest))
        now = float(line.split()[2])
        created = keywords.get("TIME_CREATED")
        path = rest.split()[0] if rest.split() and "=" not in rest.split()[0] else ""
        yield Circuit(
            circuit_id=circ_id,
            status=status,
            time=now,
            build_time=round(now - _iso_to_unix(created), 6) if created else None,
            purpose=keywords.get("PURPOSE", ""),
            hops=len(path.split(",")) if path else 0,
            reason=keywords.get("REASON", ""),
            conflux_id=keywords.get("CONFLUX_ID", ""),
        )
