"""Each circuit's hop windows, hop by hop, with the client it serves
(tor-patches/0009): the last line each tor logged for each circuit and
direction, followed from the client along the circuit.

A circuit id names a circuit on its channel at both ends, so the hop at
address A whose line reads ``next B id X`` is followed by the line at the
tor with address B that reads ``prev A id X``. Each host of a run has its
own address (the manifest's ``ip``), so the first hop's ``prev`` names
the client: that gives each hop its position from the client (1 the
first hop, 0 the client's own window), the circuit's class and a name
for the circuit that its lines share. A line that no chain from a client
reaches (a relay's own circuits, those of hosts that are not clients)
keeps position -1 and no class."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass

from runner.experiments.congestion import circuit_window_log as parse
from runner.experiments.congestion.circuit_window_log import CircuitWindow
from runner.logs.run_logs import RunLogs
from runner.manifest import HostInfo
from runner.tables.definition import column
from runner.tables.schema import tor_log_paths

UNLINKED = -1  # the position of a line no chain from a client reaches


@dataclass(frozen=True, kw_only=True)
class _PlaceOnCircuit:
    """The columns that place a line: its run, its tor, and where that tor
    sits on the circuit (they come first: a base class's fields precede
    the others)."""

    variant: str
    seed: int
    host: str  # the tor that logged it
    role: str
    position: int  # hops from the client (0: the client), or UNLINKED
    client: str  # the client the circuit serves ("" if unlinked)
    cls: str = column("class")  # the client's class ("" if unlinked)
    # The circuit, the same at every hop: client>first relay#circuit id on
    # their channel ("" if unlinked).
    circuit_name: str = column("circuit")


@dataclass(frozen=True, kw_only=True)
class CircuitWindowRow(CircuitWindow, _PlaceOnCircuit):
    """One circuit's hop window in one direction at one tor of a run, with
    its place on the circuit."""

    @property
    def mean_window(self) -> float | None:
        """The window at its decisions, on average (cells)."""
        return self.window_sum / self.decisions if self.decisions else None

    @property
    def mean_inflight(self) -> float | None:
        """The cells in flight to the next hop as each cell was sent."""
        return self.inflight_sum / self.cells_sent if self.cells_sent else None


def _logged(logs: RunLogs) -> Iterator[tuple[str, str, CircuitWindow]]:
    """(host, role, line) for every circuit's last line at every tor."""
    for host, role, log in tor_log_paths(logs):
        lines = logs.lines(log, logs.record_markers.get("tor", ()))
        for window in parse.last_per_circuit(lines, logs.on_error(log)):
            yield host, role, window


@dataclass(frozen=True)
class Place:
    """Where a line sits: hops from the client (0: the client itself), the
    client, and the circuit's name, the same at every hop."""

    position: int
    client: str
    circuit: str


NOWHERE = Place(UNLINKED, "", "")


def place_on_circuits(
    logged: list[tuple[str, CircuitWindow]], hosts: Mapping[str, HostInfo]
) -> list[Place]:
    """For each (host, line), its place, following each circuit from the
    client (its own line, ``prev origin``, or its first hop's, whose
    ``prev`` is a client's address) along the ``next`` addresses and ids;
    NOWHERE where no chain from a client reaches. A circuit is named
    ``client>first relay#id``, the id on the channel between them."""
    by_address = {info["ip"]: host for host, info in hosts.items() if info.get("ip")}
    clients = {host for host, info in hosts.items() if info["role"] == "client"}
    # A hop's lines by (its host, its previous hop's address, the circuit id
    # on that channel): how the hop before finds it.
    entered: dict[tuple[str, str, int], list[int]] = {}
    for i, (host, window) in enumerate(logged):
        entered.setdefault((host, window.prev, window.prev_id), []).append(i)
    placed = [NOWHERE] * len(logged)

    def follow(indexes: list[int], position: int, client: str, circuit: str) -> None:
        while indexes:
            nxt: list[int] = []
            for i in indexes:
                if placed[i] != NOWHERE:
                    continue
                placed[i] = Place(position, client, circuit)
                host, window = logged[i]
                after = by_address.get(window.next)
                here = hosts[host].get("ip", "")
                if after is not None and here:
                    nxt += entered.get((after, here, window.next_id), [])
            indexes, position = nxt, position + 1

    for i, (host, window) in enumerate(logged):
        first = by_address.get(window.next)
        if window.prev == parse.ORIGIN and host in clients and first is not None:
            follow([i], 0, host, f"{host}>{first}#{window.next_id}")
        elif by_address.get(window.prev) in clients:
            client = by_address[window.prev]
            follow([i], 1, client, f"{client}>{host}#{window.prev_id}")
    return placed


def circuit_window_rows(logs: RunLogs) -> Iterator[CircuitWindowRow]:
    logged = list(_logged(logs))
    hosts = logs.run.hosts
    places = place_on_circuits([(host, window) for host, _, window in logged], hosts)
    for (host, role, window), place in zip(logged, places, strict=True):
        yield CircuitWindowRow(
            **asdict(window),
            variant=logs.run.variant,
            seed=logs.run.seed,
            host=host,
            role=role,
            position=place.position,
            client=place.client,
            cls=hosts[place.client].get("class", "") if place.client else "",
            circuit_name=place.circuit,
        )
