"""Parse the N23 totals that tor logs with the consensus parameter n23=1
(tor-patches/0006): once a second, when they changed, each tor logs the
credit cells it sent, received and dropped, how often a circuit ran out of
credit for its next hop, and the relay cells it sent with N23 on (and of
those, the ones sent before the next hop had returned any credit). The
last line of a log holds the run's totals."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from runner.logs.totals import last_line

MARKER = "N23 totals"
_LINE = re.compile(
    r"\[notice\] N23 totals: credit cells sent (\d+); received (\d+); dropped (\d+); "
    r"stalls (\d+); relay cells sent (\d+); before credit (\d+)\s*$"
)


@dataclass(frozen=True)
class N23Totals:
    credit_sent: int  # credit cells returned to previous hops
    credit_received: int  # ... taken from next hops
    credit_dropped: int  # no such circuit, wrong version, or N23 off here
    stalls: int  # times a circuit ran out of credit for its next hop
    cells_sent: int  # relay cells sent with N23 on
    cells_before_credit: int  # ... to a hop that had returned no credit yet


def parse_line(line: str) -> N23Totals | None:
    match = _LINE.search(line)
    return N23Totals(*map(int, match.groups())) if match else None


def last_totals(lines: Iterable[str]) -> N23Totals | None:
    """The last totals line of a log (the totals only grow), or None."""
    return last_line(lines, MARKER, parse_line)
