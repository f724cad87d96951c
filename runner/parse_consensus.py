"""Parse a tor consensus document into one record per relay.

The report uses it to show what the network looked like to clients: which
relays had which flags (Conflux legs need Fast and Stable relays), and
whether consensus weights came from the bandwidth file (measured) or from
the relays' own reports (``Unmeasured=1``; tor uses measured weights only
when at least three authorities vote them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class RelayStatus:
    nickname: str
    address: str
    flags: frozenset[str]
    bandwidth: int  # consensus weight
    measured: bool


def parse_consensus(lines: Iterable[str]) -> Iterator[RelayStatus]:
    nickname = address = ""
    flags: frozenset[str] = frozenset()
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "r" and len(parts) >= 7:
            nickname, address, flags = parts[1], parts[6], frozenset()
        elif parts[0] == "s" and nickname:
            flags = frozenset(parts[1:])
        elif parts[0] == "w" and nickname:
            fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
            yield RelayStatus(
                nickname,
                address,
                flags,
                int(fields.get("Bandwidth", "0")),
                fields.get("Unmeasured") != "1",
            )
            nickname = ""
