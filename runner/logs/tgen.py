"""Parse tgen 1.1.x client logs into one record per finished transfer.

A transfer finishes with a ``[stream-success]`` or ``[stream-error]`` line;
transfers still running when the simulation stops have no such line and are
not counted (neither completed nor failed). Times follow tornettools:
time to first/last byte counts from the moment tgen sent its command, after
the SOCKS handshake.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from runner.logs.damage import parsed

_SECTION = re.compile(r"\b(transport|stream|bytes|times) \[([^\]]*)\]")
_FINISHED = re.compile(r"\[stream-(success|error)\]")
RECORD_MARKERS = ("[stream-success]", "[stream-error]")  # a damaged one lost a transfer


@dataclass(frozen=True)
class Transfer:
    transfer_id: str
    vertex: str
    size: int  # bytes the client asked to receive
    send_size: int  # bytes this end was to send
    peer: str  # tgen's name for the other end
    bytes_received: int
    start: float  # unix seconds (of the simulated clock under Shadow)
    end: float
    ttfb: float | None  # seconds from command to first payload byte
    ttlb: float | None
    success: bool
    error: str  # "" on success


def _tags(text: str) -> dict[str, str]:
    tags = {}
    for pair in text.split(","):
        key, sep, value = pair.partition("=")
        if sep:
            tags[key] = value
    return tags


def _usec_delta(times: dict[str, str], later: str, earlier: str) -> float | None:
    try:
        a, b = int(times[later]), int(times[earlier])
    except (KeyError, ValueError):
        return None
    if a < 0 or b < 0 or a < b:
        return None
    return (a - b) / 1_000_000


def _error_code(stream: dict[str, str], transport: dict[str, str]) -> str:
    code = stream.get("error", "UNKNOWN")
    if code == "PROXY":  # the same refinement tgentools applies
        terr, state = transport.get("error", ""), transport.get("state", "")
        code = (
            f"{code}-{terr}-{state}"
            if "STALLOUT" in terr or "TIMEOUT" in terr
            else f"{code}-{terr}"
        )
    return code


def parse_line(line: str) -> Transfer | None:
    """The transfer a log line finishes, or None for any other line."""
    finished = _FINISHED.search(line)
    if not finished:
        return None
    sections = {name: _tags(body) for name, body in _SECTION.findall(line)}
    stream, times, sizes = sections.get("stream"), sections.get("times"), sections.get("bytes")
    if stream is None or times is None or sizes is None:
        raise ValueError(f"tgen line without stream/bytes/times sections: {line.strip()[:200]}")
    transport = sections.get("transport", {})
    end = float(line.split()[2])
    elapsed = _usec_delta(times, "now-ts", "created-ts")
    success = finished.group(1) == "success"
    return Transfer(
        transfer_id=f"{stream.get('id', '?')}:{transport.get('local', '?')}",
        vertex=stream.get("vertexid", ""),
        size=int(stream.get("recvsize", sizes.get("payload-bytes-recv", "0"))),
        send_size=int(stream.get("sendsize", sizes.get("payload-bytes-send", "0"))),
        peer=stream.get("peername", ""),
        bytes_received=int(sizes.get("payload-bytes-recv", "0")),
        start=end - elapsed if elapsed is not None else end,
        end=end,
        ttfb=_usec_delta(times, "usecs-to-first-byte-recv", "usecs-to-command"),
        # A failed transfer has no last byte, whatever its partial counters say.
        ttlb=_usec_delta(times, "usecs-to-last-byte-recv", "usecs-to-command") if success else None,
        success=success,
        error="" if success else _error_code(stream, transport),
    )


def parse_lines(
    lines: Iterable[str], on_error: Callable[[int, str, str], None] | None = None
) -> Iterator[Transfer]:
    """The finished transfers; a result line that does not parse goes to
    ``on_error`` (or stops with an error naming it)."""
    return parsed(lines, parse_line, on_error)
