"""Parse the hop window totals that tor logs with the consensus parameter
hop_window=1 (tor-patches/0007): once a second, when they changed, each
tor logs the feedback entries (one per circuit with news per channel
flush) it sent, received and dropped, and those whose channel closed
before the flush; the HOP_FORWARDED cells that carried them; how often a
circuit's window for its next hop was full; the relay cells it sent (and
of those, the ones sent before the next hop had reported any); its window
decisions with their increases and decreases, the decisions where the
next hops' c_diff was the larger, and the sum of the windows at the
decisions. The last line of a log holds the run's totals.

Logs of the patch's first form, which sent a full cell per report, read
with each report as one entry in one cell."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from runner.logs.totals import last_line
from runner.tables.definition import column

MARKER = "Hop window totals"
_COUNTS = (
    r"stalls (\d+); relay cells sent (\d+); before feedback (\d+); "
    r"decisions (\d+); increases (\d+); decreases (\d+); remote larger (\d+); "
    r"window sum (\d+)\s*$"
)
_LINE = re.compile(
    r"\[notice\] Hop window totals: feedback entries sent (\d+); received (\d+); "
    r"dropped (\d+); unsent (\d+); feedback cells sent (\d+); received (\d+); "
    r"dropped (\d+); " + _COUNTS
)
_FIRST_FORM = re.compile(
    r"\[notice\] Hop window totals: feedback cells sent (\d+); received (\d+); "
    r"dropped (\d+); " + _COUNTS
)


# Keyword-only: the columns older tables lack come last with their
# defaults, after the columns of the rows built on these totals.
@dataclass(frozen=True, kw_only=True)
class HopWindowTotals:
    feedback_sent: int  # feedback entries to previous hops
    feedback_received: int  # ... from next hops
    feedback_dropped: int  # no such circuit, or a damaged cell's entries
    stalls: int  # times a circuit's window for its next hop was full
    cells_sent: int  # relay cells sent with the hop window on
    cells_before_feedback: int  # ... to a hop that had reported nothing yet
    decisions: int  # window decisions, one per RTT where a window is held
    increases: int
    decreases: int
    remote_larger: int  # Marut: the next hops' c_diff was the larger
    window_sum: int  # windows at the decisions, summed (cells)
    feedback_unsent: int = column(default=0)  # entries whose channel closed
    feedback_cells_sent: int = column(default=0)  # HOP_FORWARDED cells
    feedback_cells_received: int = column(default=0)
    feedback_cells_dropped: int = column(default=0)  # wrong length or version

    @property
    def mean_window(self) -> float:
        return self.window_sum / self.decisions if self.decisions else float("nan")

    @property
    def entries_per_cell(self) -> float:
        """Feedback entries per HOP_FORWARDED cell sent: how much one flush
        packs together."""
        sent = self.feedback_cells_sent
        return self.feedback_sent / sent if sent else float("nan")


def parse_line(line: str) -> HopWindowTotals | None:
    match = _LINE.search(line)
    if match:
        (sent, received, dropped, unsent, cells_sent, cells_received, cells_dropped) = map(
            int, match.groups()[:7]
        )
        counts = list(map(int, match.groups()[7:]))
    else:
        match = _FIRST_FORM.search(line)
        if not match:
            return None
        sent, received, dropped = map(int, match.groups()[:3])
        unsent, cells_sent, cells_received, cells_dropped = 0, sent, received, 0
        counts = list(map(int, match.groups()[3:]))
    stalls, relay_sent, before, decisions, increases, decreases, remote, window = counts
    return HopWindowTotals(
        feedback_sent=sent,
        feedback_received=received,
        feedback_dropped=dropped,
        stalls=stalls,
        cells_sent=relay_sent,
        cells_before_feedback=before,
        decisions=decisions,
        increases=increases,
        decreases=decreases,
        remote_larger=remote,
        window_sum=window,
        feedback_unsent=unsent,
        feedback_cells_sent=cells_sent,
        feedback_cells_received=cells_received,
        feedback_cells_dropped=cells_dropped,
    )


def last_totals(lines: Iterable[str]) -> HopWindowTotals | None:
    """The last totals line of a log (the totals only grow), or None."""
    return last_line(lines, MARKER, parse_line)
