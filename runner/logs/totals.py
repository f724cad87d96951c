"""What tor's patches log as running totals (the experiments' mechanism
counters): one line, logged once a second when the totals change."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def last_line(lines: Iterable[str], marker: str, parse: Callable[[str], T | None]) -> T | None:
    """The last line holding ``marker`` that ``parse`` reads, parsed (tor's
    totals lines only grow, so the last is the run's), or None."""
    last = None
    for line in lines:
        if marker in line:
            last = parse(line) or last
    return last
