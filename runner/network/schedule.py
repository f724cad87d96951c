"""When each process of a host starts: the same order for every backend.

Authorities first, then relays by role, then clients; servers listen from
the start; clients' traffic begins when the bootstrap period ends, in the
sessions their workload model gives (one tgen process per session).
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.network.plan import Host

_TOR_START = {"authority": 1, "exitguard": 2, "exit": 3, "guard": 4, "middle": 5, "client": 6}

CLIENT_EVENTS = "BW,CIRC,CIRC_MINOR,STREAM"
RELAY_EVENTS = "BW,CIRC"


@dataclass(frozen=True)
class Process:
    program: str  # tor, oniontrace, tgen
    args: tuple[str, ...]
    start: float  # seconds after the network starts
    stop: float | None = None  # stopped (SIGTERM) then; None: runs to the end
    # Ends on its own, with status 0, before the end (a client whose
    # workload stops after a number of cycles).
    ends: bool = False


def host_processes(
    host: Host,
    control_port: int,
    workload_file: str | None,
    server_file: str,
    sessions: list[tuple[float, float | None]],
    cross_file: str | None = None,
    ends: bool = False,
) -> list[Process]:
    """The processes of ``host``, in start order; a client's tgen runs in
    each of its ``sessions`` (start, stop) in turn (``ends``: it ends on its
    own); a relay with cross traffic runs ``cross_file`` in tgen from its
    first session's start."""
    if host.role == "server":
        return [Process("tgen", (server_file,), 1)]
    start = _TOR_START[host.role]
    events = CLIENT_EVENTS if host.role == "client" else RELAY_EVENTS
    processes = [
        Process("tor", ("--defaults-torrc", "torrc-defaults", "-f", "torrc"), start),
        Process(
            "oniontrace",
            ("Mode=log", f"TorControlPort={control_port}", "LogLevel=info", f"Events={events}"),
            start + 1,
        ),
    ]
    if host.role == "client":
        if workload_file is None:
            raise ValueError(f"client {host.name} has no workload")
        processes.extend(Process("tgen", (workload_file,), a, b, ends) for a, b in sessions)
    elif cross_file is not None:
        processes.append(Process("tgen", (cross_file,), sessions[0][0] if sessions else start + 2))
    return processes
