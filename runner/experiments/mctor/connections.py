"""MCTor's measurements: rounds of parallel streams, their completion times
and throughputs with Tukey's fences, the fairness gap between two users of
one path, and the connections and circuits that tor placed on that path.

A round is one phase of the rounds workload (workloads.models.Rounds): its
streams start together, and it completes when the last of their bytes has
arrived, at the client for a download, at the server for an upload.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from runner.experiments.mctor.tables import PlacementRow
from runner.tables.schema import CircuitRow


@dataclass(frozen=True)
class HopCheck:
    """The connections between two adjacent hops of a measured client's
    path, as the nearer end logged them when it last placed a circuit."""

    variant: str
    seed: int
    host: str
    peer: str
    expected: int
    placements: int
    open_connections: int | None  # None: no circuit placed on this hop
    usable_connections: int | None  # open ones still taking new circuits
    circuits: tuple[int, ...]  # outbound circuits on each open connection
    most_usable: int

    @property
    def ok(self) -> bool:
        return self.usable_connections == self.expected


def pinned_path(torrc_lines: Iterable[str]) -> tuple[str, ...] | None:
    """(entry, middle, exit) from EntryNodes, MiddleNodes and ExitNodes lines
    that name one relay each; None if the lines do not pin one path."""
    named = {}
    for line in torrc_lines:
        key, _, value = line.partition(" ")
        if key in ("EntryNodes", "MiddleNodes", "ExitNodes") and "," not in value:
            named[key] = value.strip()
    if len(named) != 3:
        return None
    return named["EntryNodes"], named["MiddleNodes"], named["ExitNodes"]


def hop_checks(
    placements: Sequence[PlacementRow],
    paths: Mapping[tuple[str, int, str], tuple[str, ...]],
    expected: Mapping[str, int],
) -> list[HopCheck]:
    """One check per hop of each measured client's pinned path (client to
    entry, entry to middle, middle to exit), in each run of a variant that
    expects a number of connections."""
    by_hop: dict[tuple[str, int, str, str], list[PlacementRow]] = defaultdict(list)
    for p in placements:
        by_hop[(p.variant, p.seed, p.host, p.peer)].append(p)
    checks = {}
    for (variant, seed, client), path in sorted(paths.items()):
        if variant not in expected:
            continue
        for host, peer in zip((client, *path[:-1]), path, strict=True):
            key = (variant, seed, host, peer)
            if key in checks:
                continue  # two users share the relays' hops
            rows = sorted(by_hop.get(key, []), key=lambda p: p.time)
            last = rows[-1] if rows else None
            checks[key] = HopCheck(
                variant,
                seed,
                host,
                peer,
                expected[variant],
                len(rows),
                last.open_connections if last else None,
                last.usable_connections if last else None,
                last.circuits if last else (),
                max((p.usable_connections for p in rows), default=0),
            )
    return list(checks.values())


@dataclass(frozen=True)
class StreamCircuits:
    variant: str
    seed: int
    host: str
    expected: int
    circuits: int  # circuits that carried at least one stream
    streams: int
    # Streams on circuits beyond the ``expected`` busiest: more circuits
    # serve when tor replaces one. MCTor's client swaps a circuit that shares
    # a connection for one on a connection of its own once that is built,
    # and where circuits share connections (MCTorCircuits), a stream that
    # waits 10 s for its exit's answer behind the others' cells makes tor
    # retire its circuit for new streams.
    beyond: int = 0

    @property
    def ok(self) -> bool | None:
        """At least N circuits for N > 1; stock tor (N = 1) promises no number."""
        if self.expected <= 1:
            return None
        return self.circuits >= self.expected


def stream_circuits(
    circuits: Iterable[CircuitRow],
    clients: Iterable[tuple[str, int, str]],
    expected: dict[str, int],
) -> list[StreamCircuits]:
    """How many circuits carried each measured client's streams, and how
    many streams rode circuits beyond the expected number of busiest ones."""
    used: dict[tuple[str, int, str], list[int]] = defaultdict(list)
    for c in circuits:
        if c.streams:
            used[(c.variant, c.seed, c.host)].append(c.streams)
    result = []
    for key in sorted(clients):
        variant, seed, host = key
        if variant not in expected:
            continue
        counts = sorted(used[key], reverse=True)
        result.append(
            StreamCircuits(
                variant,
                seed,
                host,
                expected[variant],
                len(counts),
                sum(counts),
                sum(counts[expected[variant] :]),
            )
        )
    return result


@dataclass(frozen=True)
class CircuitSpread:
    """The connections that a measured client's stream-carrying circuits
    took on one hop of its pinned path, followed hop by hop through the
    circuit IDs in the placement lines (tor-patches/0003)."""

    variant: str
    seed: int
    client: str
    host: str  # the nearer end of the hop
    peer: str
    expected: int  # distinct connections the variant asks for
    circuits: int  # the client's circuits that carried streams
    followed: int  # of those, placed on this hop and found in the log
    connections: int  # distinct connections they sit on here

    @property
    def ok(self) -> bool | None:
        """None when the log names no circuits (a build without the IDs)."""
        if self.followed == 0 and self.circuits > 0:
            return None
        return self.followed == self.circuits and self.connections == self.expected


def circuit_spread(
    placements: Sequence[PlacementRow],
    circuits: Iterable[CircuitRow],
    paths: Mapping[tuple[str, int, str], tuple[str, ...]],
    expected: Mapping[str, int],
) -> list[CircuitSpread]:
    """Per run, measured client and hop of its pinned path: on how many
    distinct connections the circuits that carried its streams sit. The
    client's line names a circuit by its global identifier (oniontrace's
    circuit ID) and its new ID on the first hop; each relay's line names
    the ID it arrived with and its new one on the next hop."""
    by_origin: dict[tuple[str, int, str, int], PlacementRow] = {}
    by_arrival: dict[tuple[str, int, str, int], PlacementRow] = {}
    for p in placements:
        if p.origin is not None:
            by_origin[(p.variant, p.seed, p.host, p.origin)] = p
        elif p.from_id is not None:
            by_arrival[(p.variant, p.seed, p.host, p.from_id)] = p
    carrying: dict[tuple[str, int, str], list[int]] = defaultdict(list)
    for c in circuits:
        if c.streams and c.circuit_id.isdigit():
            carrying[(c.variant, c.seed, c.host)].append(int(c.circuit_id))

    result = []
    for (variant, seed, client), path in sorted(paths.items()):
        if variant not in expected:
            continue
        ids = carrying.get((variant, seed, client), [])
        # Each circuit's placement on the current hop, or None once lost.
        current: list[PlacementRow | None] = [
            by_origin.get((variant, seed, client, i)) for i in ids
        ]
        for host, peer in zip((client, *path[:-1]), path, strict=True):
            if host != client:
                current = [
                    None
                    if p is None or p.circuit_id is None
                    else by_arrival.get((variant, seed, host, p.circuit_id))
                    for p in current
                ]
            found = [p for p in current if p is not None and p.peer == peer]
            result.append(
                CircuitSpread(
                    variant,
                    seed,
                    client,
                    host,
                    peer,
                    expected[variant],
                    len(ids),
                    len(found),
                    len({p.connection for p in found}),
                )
            )
    return result
