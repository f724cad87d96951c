"""Parse the hop feedback totals that tor logs with cc_hop_feedback on
(tor-patches/0005): once a second, when they changed, each tor logs how many
feedback cells it originated, received and forwarded at each position on a
circuit, delivered to a sending end or dropped, and how many window
decisions it made, with feedback pending and with the feedback larger than
its own estimate. The last line of a log holds the run's totals."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, fields
from itertools import zip_longest
from typing import Any

from runner.logs.totals import last_line

MARKER = "Hop feedback totals"

_LINE = re.compile(
    r"\[notice\] Hop feedback totals: originated (\d+); delivered (\d+); dropped (\d+); "
    r"decisions (\d+); with feedback (\d+); feedback larger (\d+); "
    r"received by position ([\d,]+); forwarded by position ([\d,]+); "
    r"larger at position ([\d,]+)\s*$"
)


@dataclass(frozen=True)
class HopFeedbackTotals:
    originated: int
    delivered: int  # reached the circuit's sending end
    dropped: int  # no such circuit, unknown version, or no Vegas at the end
    decisions: int  # window decisions made as a sending end
    with_feedback: int  # ... with hop feedback pending
    feedback_larger: int  # ... where the hops' value was larger than our own
    # Per position on the circuit, counted from the hop next to the end that
    # originates the feedback (for downloads: 1 = guard, 2 = middle, ...).
    received: tuple[int, ...]
    forwarded: tuple[int, ...]
    larger_at: tuple[int, ...]  # where the larger values came from

    @property
    def larger_share(self) -> float:
        """Of the window decisions made with hop feedback pending, the share
        where the hops' value, not the end's own estimate, was larger."""
        return self.feedback_larger / self.with_feedback if self.with_feedback else float("nan")


PER_POSITION = ("received", "forwarded", "larger_at")


def summed(totals: Iterable[HopFeedbackTotals]) -> HopFeedbackTotals:
    """Field by field sums; per-position counts of different lengths (3- and
    4-hop circuits) are padded with zeros."""
    items = list(totals)
    sums: dict[str, Any] = {}
    for name in (f.name for f in fields(HopFeedbackTotals)):
        values = [getattr(t, name) for t in items]
        if name in PER_POSITION:
            sums[name] = tuple(map(sum, zip_longest(*values, fillvalue=0)))
        else:
            sums[name] = sum(values)
    return HopFeedbackTotals(**sums)


def _counts(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in text.split(","))


def parse_line(line: str) -> HopFeedbackTotals | None:
    match = _LINE.search(line)
    if not match:
        return None
    originated, delivered, dropped, decisions, with_feedback, larger = map(int, match.groups()[:6])
    return HopFeedbackTotals(
        originated=originated,
        delivered=delivered,
        dropped=dropped,
        decisions=decisions,
        with_feedback=with_feedback,
        feedback_larger=larger,
        received=_counts(match.group(7)),
        forwarded=_counts(match.group(8)),
        larger_at=_counts(match.group(9)),
    )


def last_totals(lines: Iterable[str]) -> HopFeedbackTotals | None:
    """The last totals line of a log, or None."""
    return last_line(lines, MARKER, parse_line)
