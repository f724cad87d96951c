"""Parse oniontrace 1.0 logs (Mode=log) into one record per circuit.

oniontrace logs each control-port event as
``... Logger: 650 CIRC <id> <status> <path> KEY=VALUE ...`` (and
``650 CIRC_MINOR <id> <event> ...``). For each circuit:

- its first BUILT or FAILED event gives its status and build time (later
  events for the same id, such as cannibalisation, are not build times);
- a conflux leg is *linked* when an event shows ``PURPOSE=CONFLUX_LINKED``;
  its ``CONFLUX_ID`` there names the set it joined.

Circuits that neither built nor failed by the end (still launching) are left
out, except conflux legs seen linking: those were built before oniontrace
subscribed to events, and count as built with no build time.

``650 STREAM <id> SUCCEEDED <circuit> <target>`` events count the client
streams each circuit carried (directory fetches, whose targets are
``...$FP.exit:port``, are not counted).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

_EVENT = re.compile(r"Logger: 650 (CIRC|CIRC_MINOR) (\S+) (\S+)(.*)$")
_STREAM = re.compile(r"Logger: 650 STREAM \S+ SUCCEEDED (\S+) (\S+)")
_KEYWORD = re.compile(r"\b([A-Z_]+)=(\S+)")
RECORD_MARKERS = ("650 CIRC ", "650 STREAM ")  # a damaged one lost a circuit event


@dataclass(frozen=True)
class Circuit:
    circuit_id: str
    status: str  # BUILT or FAILED
    time: float  # unix seconds of that event
    build_time: float | None  # seconds from creation to that event
    purpose: str  # the purpose at that event
    hops: int
    reason: str
    conflux_id: str  # the linked set it joined, "" if never linked
    guard: str = ""  # the first hop's nickname (or fingerprint), "" if unknown
    streams: int = 0  # client streams it carried
    path: tuple[str, ...] = ()  # every hop's nickname (or fingerprint), client first


@dataclass
class _State:
    status: str = ""
    time: float = 0.0
    build_time: float | None = None
    purpose: str = ""
    hops: int = 0
    reason: str = ""
    conflux_id: str = ""
    linked_at: float = 0.0
    linked_hops: int = 0
    guard: str = ""
    streams: int = 0
    path: tuple[str, ...] = ()


def _hops(rest: str) -> int:
    """Relays in the path that follows an event's status word, 0 if none."""
    first = rest.split()[0] if rest.split() else ""
    return 0 if not first or "=" in first else len(first.split(","))


def _path(rest: str) -> tuple[str, ...]:
    """The relays of the path that follows the status word, each by its
    nickname from ``$FP~nick``, else its fingerprint; () if no path."""
    first = rest.split()[0] if rest.split() else ""
    if not first or "=" in first:
        return ()
    return tuple(hop.partition("~")[2] or hop.lstrip("$") for hop in first.split(","))


def _first_hop(rest: str) -> str:
    """The first relay of the path that follows the status word; "" if none."""
    path = _path(rest)
    return path[0] if path else ""


def _iso_to_unix(text: str) -> float:
    date, _, fraction = text.partition(".")
    seconds = calendar.timegm(
        (
            int(date[0:4]),
            int(date[5:7]),
            int(date[8:10]),
            int(date[11:13]),
            int(date[14:16]),
            int(date[17:19]),
            0,
            0,
            0,
        )
    )
    return seconds + (float(f"0.{fraction}") if fraction else 0.0)


def _apply(line: str, circuits: dict[str, _State]) -> None:
    """Fold one log line into the circuits seen so far."""
    match = _EVENT.search(line)
    if not match:
        stream = _STREAM.search(line)
        if stream and ".exit:" not in stream.group(2):
            circuits.setdefault(stream.group(1), _State()).streams += 1
        return
    kind, circ_id, status, rest = match.groups()
    keywords = dict(_KEYWORD.findall(rest))
    now = float(line.split()[2])  # before any change: a line that fails changes nothing
    built = kind == "CIRC" and status in ("BUILT", "FAILED")
    created = keywords.get("TIME_CREATED") if built else None
    created_at = _iso_to_unix(created) if created else None
    state = circuits.setdefault(circ_id, _State())
    if keywords.get("PURPOSE") == "CONFLUX_LINKED" and keywords.get("CONFLUX_ID"):
        state.conflux_id = state.conflux_id or keywords["CONFLUX_ID"]
        state.linked_at = state.linked_at or now
        state.linked_hops = state.linked_hops or _hops(rest)
        state.guard = state.guard or _first_hop(rest)
        state.path = state.path or _path(rest)
    if not built or state.status:
        return
    state.status = status
    state.time = now
    state.build_time = round(now - created_at, 6) if created_at is not None else None
    state.purpose = keywords.get("PURPOSE", "")
    state.hops = _hops(rest)
    state.guard = _first_hop(rest) or state.guard
    state.path = _path(rest) or state.path
    state.reason = keywords.get("REASON", "")


def parse_lines(
    lines: Iterable[str], on_error: Callable[[int, str, str], None] | None = None
) -> Iterator[Circuit]:
    """One record per circuit; an event line that does not parse goes to
    ``on_error`` (or stops with an error naming it)."""
    circuits: dict[str, _State] = {}
    for number, line in enumerate(lines, start=1):
        try:
            _apply(line, circuits)
        except (ValueError, IndexError) as exc:
            if on_error is None:
                raise ValueError(f"line {number}: {exc}") from None
            on_error(number, line, str(exc))
    for circ_id, s in circuits.items():
        if s.status:
            yield Circuit(
                circ_id,
                s.status,
                s.time,
                s.build_time,
                s.purpose,
                s.hops,
                s.reason,
                s.conflux_id,
                s.guard,
                s.streams,
                s.path,
            )
        elif s.conflux_id:
            # Linked before oniontrace subscribed (it waits for tor to bootstrap):
            # a leg links only once built, but its build time was not seen.
            yield Circuit(
                circ_id,
                "BUILT",
                s.linked_at,
                None,
                "CONFLUX_LINKED",
                s.linked_hops,
                "",
                s.conflux_id,
                s.guard,
                s.streams,
                s.path,
            )
