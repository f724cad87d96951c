"""Parse the per-circuit hop window lines that tor logs with hop_window=1
and hop_window_circuit_log=N (tor-patches/0009): every N seconds each
circuit whose window sent relay cells since its last line logs, per
direction, its counts from the window's start, and a last line
("closed") when it is freed. A line names its circuit by its neighbours
as the logging hop saw them: the previous hop's address and circuit id
(``origin`` where the circuit starts there) and the next hop's (``none``
at the exit). The counts only grow, so a circuit's last line holds its
totals."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

MARKER = "Hop window circuit"
ORIGIN = "origin"  # prev of a circuit that starts at the logging tor
NONE = "none"  # a neighbour the logging tor never saw (next, at an exit)

_LINE = re.compile(
    r"\[notice\] Hop window circuit (open|closed): direction (in|out); "
    r"prev (\S+) id (\d+); next (\S+) id (\d+); holds ([01]); cells sent (\d+); "
    r"in flight sum (\d+); stalls (\d+); decisions (\d+); window sum (\d+); "
    r"window max (\d+); window (\d+); samples (\d+); rtt sum (\d+) usec; "
    r"base rtt (\d+) usec; age (\d+) msec\s*$"
)


@dataclass(frozen=True, kw_only=True)
class CircuitWindow:
    """One circuit's hop window in one direction at one tor: the counts of
    its last line. ``direction``: ``in`` towards the circuit's origin (a
    download's cells), ``out`` away from it."""

    direction: str
    prev: str  # the previous hop's address, or ORIGIN
    prev_id: int  # the circuit's id on the channel from it (0 at the origin)
    next: str  # the next hop's address, or NONE
    next_id: int
    holds: bool  # this hop holds the window (under Marut only the sending end)
    closed: bool  # the line logged as the circuit was freed
    cells_sent: int  # relay cells this hop sent that way
    inflight_sum: int  # cells in flight to the next hop, summed as each was sent
    stalls: int  # sends that left the window full
    decisions: int  # window decisions (where the window is held)
    window_sum: int  # windows at the decisions, summed (cells)
    window_max: int  # the largest window (cells)
    window: int  # the window at the line (cells)
    samples: int  # hop RTT samples
    rtt_sum_usec: int
    base_rtt_usec: int  # the next hop's base RTT at the last sample
    age_ms: int  # the window's age at the line

    @property
    def circuit(self) -> tuple[str, int, str, int]:
        """The circuit at the logging tor: its neighbours and ids (both
        directions share it)."""
        return (self.prev, self.prev_id, self.next, self.next_id)


def parse_line(line: str) -> CircuitWindow | None:
    match = _LINE.search(line)
    if not match:
        return None
    state, direction, prev, prev_id, nxt, next_id, holds, *counts = match.groups()
    (cells, inflight, stalls, decisions, window_sum, window_max, window) = map(int, counts[:7])
    samples, rtt_sum, base_rtt, age = map(int, counts[7:])
    return CircuitWindow(
        direction=direction,
        prev=prev,
        prev_id=int(prev_id),
        next=nxt,
        next_id=int(next_id),
        holds=holds == "1",
        closed=state == "closed",
        cells_sent=cells,
        inflight_sum=inflight,
        stalls=stalls,
        decisions=decisions,
        window_sum=window_sum,
        window_max=window_max,
        window=window,
        samples=samples,
        rtt_sum_usec=rtt_sum,
        base_rtt_usec=base_rtt,
        age_ms=age,
    )


def last_per_circuit(
    lines: Iterable[str], on_error: Callable[[int, str, str], None] | None = None
) -> list[CircuitWindow]:
    """Each circuit's last line per direction, in the order the circuits
    ended or the log did. A ``closed`` line ends its circuit: a later line
    with the same neighbours and ids is a new circuit. A line that holds
    the marker and does not parse goes to ``on_error`` (line number, line,
    why)."""
    open_now: dict[tuple[str, tuple[str, int, str, int]], CircuitWindow] = {}
    ended: list[CircuitWindow] = []
    for number, line in enumerate(lines, 1):
        if MARKER not in line:
            continue
        window = parse_line(line)
        if window is None:
            if on_error is not None:
                on_error(number, line, "not a hop window circuit line")
            continue
        key = (window.direction, window.circuit)
        if window.closed:
            open_now.pop(key, None)
            ended.append(window)
        else:
            open_now[key] = window
    return ended + list(open_now.values())
