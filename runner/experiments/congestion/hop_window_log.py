"""Parse the hop window totals that tor logs with the consensus parameter
hop_window=1 (tor-patches/0007): once a second, when they changed, each
tor logs the forwarded-feedback cells it sent, received and dropped, how
often a circuit's window for its next hop was full, the relay cells it sent
(and of those, the ones sent before the next hop had reported any), its
window decisions with their increases and decreases, the decisions where
the next hops' Marut estimate was the larger, and the sum of the windows
at the decisions. The last line of a log holds the run's totals."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from runner.logs.totals import last_line

MARKER = "Hop window totals"
_LINE = re.compile(
    r"\[notice\] Hop window totals: feedback cells sent (\d+); received (\d+); "
    r"dropped (\d+); stalls (\d+); relay cells sent (\d+); before feedback (\d+); "
    r"decisions (\d+); increases (\d+); decreases (\d+); remote larger (\d+); "
    r"window sum (\d+)\s*$"
)


@dataclass(frozen=True)
class HopWindowTotals:
    feedback_sent: int  # reports of forwarded cells to previous hops
    feedback_received: int  # ... from next hops
    feedback_dropped: int  # no such circuit, wrong version, or off here
    stalls: int  # times a circuit's window for its next hop was full
    cells_sent: int  # relay cells sent with the hop window on
    cells_before_feedback: int  # ... to a hop that had reported nothing yet
    decisions: int  # window decisions, one per window of reports
    increases: int
    decreases: int
    remote_larger: int  # Marut: the next hops' estimate was the larger
    window_sum: int  # windows at the decisions, summed (cells)

    @property
    def mean_window(self) -> float:
        return self.window_sum / self.decisions if self.decisions else float("nan")


def parse_line(line: str) -> HopWindowTotals | None:
    match = _LINE.search(line)
    return HopWindowTotals(*map(int, match.groups())) if match else None


def last_totals(lines: Iterable[str]) -> HopWindowTotals | None:
    """The last totals line of a log (the totals only grow), or None."""
    return last_line(lines, MARKER, parse_line)
