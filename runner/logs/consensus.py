"""Parse a tor consensus document into one record per relay.

The report uses it to show what the network looked like to clients: which
relays had which flags (multipath legs need Fast and Stable relays), and
whether consensus weights came from the bandwidth file (measured) or from
the relays' own reports (``Unmeasured=1``; tor uses measured weights only
when at least three authorities vote them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class RelayStatus:
    nickname: str
    address: str
    flags: frozenset[str]
    bandwidth: int  # consensus weight
    measured: bool


RECORD_MARKERS = ("w Bandwidth=",)  # a damaged one lost a relay


def parse_consensus(
    lines: Iterable[str], on_error: Callable[[int, str, str], None] | None = None
) -> Iterator[RelayStatus]:
    """One record per relay; a weight line that does not parse goes to
    ``on_error`` (or stops with an error naming it) and drops that relay."""
    nickname = address = ""
    flags: frozenset[str] = frozenset()
    for number, line in enumerate(lines, start=1):
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "r" and len(parts) >= 7:
            nickname, address, flags = parts[1], parts[6], frozenset()
        elif parts[0] == "s" and nickname:
            flags = frozenset(parts[1:])
        elif parts[0] == "w" and nickname:
            fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
            relay, nickname = nickname, ""
            try:
                bandwidth = int(fields.get("Bandwidth", "0"))
            except ValueError as exc:
                if on_error is None:
                    raise ValueError(f"line {number}: {exc}") from None
                on_error(number, line, str(exc))
                continue
            yield RelayStatus(relay, address, flags, bandwidth, fields.get("Unmeasured") != "1")
