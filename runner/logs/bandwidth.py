"""Parse the per-second byte counts of oniontrace's BW events.

tor emits ``650 BW <read> <written>`` once a second with the bytes it read
and wrote in that second; oniontrace logs each as
``<date> <time> <unix seconds> [...] Logger: 650 BW <read> <written>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

_BW = re.compile(r"^\S+ \S+ (\d+(?:\.\d+)?) .*Logger: 650 BW (\d+) (\d+)\s*$")
RECORD_MARKERS = ("650 BW ",)


@dataclass(frozen=True)
class Second:
    time: float  # unix seconds of the event
    read: int  # bytes
    written: int


def parse_lines(
    lines: Iterable[str], on_error: Callable[[int, str, str], None] | None = None
) -> Iterator[Second]:
    """Each BW event of ``lines``; a line that mentions one but does not
    parse goes to ``on_error(line number, line, why)``."""
    for number, line in enumerate(lines, start=1):
        if "650 BW " not in line:
            continue
        match = _BW.match(line)
        if match is None:
            if on_error is not None:
                on_error(
                    number, line, "expected '<date> <time> <unix> ... 650 BW <read> <written>'"
                )
            continue
        yield Second(float(match[1]), int(match[2]), int(match[3]))
