"""Pinned paths: the same relays for a measured client in every variant.

A comparison of two variants on one seed shares the network, but each
client draws new circuits in each variant, so part of a seed's log ratio is
which paths the two variants happened to draw. A variant with
``pinned_path: <legs>`` gives each measured client the relays of one draw
made per seed and client, the same draw in every variant: the guards,
middles and exit are each drawn in order by bandwidth (as tor weighs them)
without replacement, and the client is held to the first ``legs`` guards
and middles and the first exit (EntryNodes, MiddleNodes, ExitNodes). So
plain Tor with 1 runs on the first guard and middle, and a multipath
variant with 2 or 3 on sets that contain them: its legs share the exit and
each takes its own guard and middle (tor excludes a set's other legs'
guards and middles), one of them on plain's relays as far as tor's guard
order puts it there. Which leg is first is tor's choice, not the draw's.

In a network of circuits drawn from a file (``network.circuits``,
runner.network.circuits), the draw is the client's circuit: its guard,
middle and exit.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from runner.errors import SpecError
from runner.network.circuits import circuit_of_client, circuit_relays, drawn_circuits
from runner.network.plan import Host, NetworkPlan
from runner.spec.model import Spec, Variant, relay_name

POSITIONS = ("guard", "middle", "exit")


@dataclass(frozen=True)
class PinnedPath:
    """A client's relays by position, each in its draw's order."""

    guards: tuple[str, ...]
    middles: tuple[str, ...]
    exits: tuple[str, ...]

    def first(self, legs: int) -> PinnedPath:
        """The relays a variant with ``legs`` pinned legs is held to."""
        return PinnedPath(self.guards[:legs], self.middles[:legs], self.exits[:1])

    def allows(self, path: tuple[str, ...]) -> bool:
        """Whether a three-hop circuit runs on these relays, position by position."""
        if len(path) != 3:
            return False
        guard, middle, exit_ = path
        return guard in self.guards and middle in self.middles and exit_ in self.exits


def _drawn_order(hosts: list[Host], rng: random.Random) -> tuple[str, ...]:
    """``hosts`` in an order drawn by bandwidth without replacement."""
    left = sorted(hosts, key=lambda h: h.name)
    order = []
    while left:
        pick = rng.choices(range(len(left)), weights=[max(1, h.bandwidth_up) for h in left])[0]
        order.append(left.pop(pick).name)
    return tuple(order)


def pinned_clients(plan: NetworkPlan) -> list[Host]:
    """The clients a pinned variant holds to one draw: the measured ones that run no relay."""
    return [h for h in plan.hosts if h.role == "client" and h.measured and not h.client_relay]


def drawn_paths(spec: Spec, plan: NetworkPlan) -> dict[str, PinnedPath]:
    """Each pinned client's full draw: depends on the spec's name, the seed
    and the network's relays only, so every variant of a seed gets the same.
    A network of drawn circuits gives each client its circuit instead."""
    if spec.network.circuits is not None:
        return _circuit_paths(spec, plan)
    positions = {
        "guard": [h for h in plan.in_position("guard") if not h.client_relay],
        "middle": [h for h in plan.with_role("middle")],
        "exit": [h for h in plan.in_position("exit") if not h.client_relay],
    }
    found = {}
    for client in pinned_clients(plan):
        rng = random.Random(f"{spec.name}/pinned-path/{plan.seed}/{client.name}")
        guards, middles, exits = (_drawn_order(positions[p], rng) for p in POSITIONS)
        found[client.name] = PinnedPath(guards, middles, exits)
    return found


def _circuit_paths(spec: Spec, plan: NetworkPlan) -> dict[str, PinnedPath]:
    """Each pinned client's circuit (runner.network.circuits): the i-th
    client of a class on the i-th circuit of its kind, so a class's first
    clients keep their circuits where a variant keeps fewer of them."""
    sample = spec.network.circuits
    assert sample is not None
    circuits = drawn_circuits(spec, plan.seed)
    names = {
        relay.fingerprint: relay_name(relay.role, number)
        for number, relay in enumerate(circuit_relays(circuits), start=1)
    }
    found = {}
    seen: dict[str, int] = {}
    for client in pinned_clients(plan):
        index = seen.get(client.cls, 0)
        seen[client.cls] = index + 1
        which = circuit_of_client(sample, client.cls, index)
        if which is None:
            raise SpecError(
                str(spec.path),
                "network.circuits",
                f"client {client.name} is the {index + 1}th of class {client.cls}, which has "
                "no circuit drawn for it (list the class under bulk or web, with no more "
                "clients than circuits of its kind)",
            )
        guard, middle, exit_ = (names[hop.fingerprint] for hop in circuits[which].hops)
        found[client.name] = PinnedPath((guard,), (middle,), (exit_,))
    return found


def pinned_paths(spec: Spec, variant: Variant, plan: NetworkPlan) -> dict[str, PinnedPath]:
    """The relays each measured client of ``variant`` is held to (none
    where the variant pins no path)."""
    legs = variant.pinned_path
    if legs <= 0:
        return {}
    found = {name: path.first(legs) for name, path in drawn_paths(spec, plan).items()}
    for path in found.values():
        for position, relays in zip(
            POSITIONS, (path.guards, path.middles, path.exits), strict=True
        ):
            wanted = 1 if position == "exit" else legs
            if len(relays) < wanted:
                raise SpecError(
                    str(spec.path),
                    f"variants.{variant.name}.pinned_path",
                    f"at most as many legs as the network has relays in each position: "
                    f"{legs} legs need {wanted} {position} relays, the network has {len(relays)}",
                )
    return found


def pinned_torrc(path: PinnedPath, fingerprints: dict[str, str]) -> list[str]:
    """The torrc lines that hold a client to ``path``."""

    def listed(names: tuple[str, ...]) -> str:
        return ",".join(f"${fingerprints[n]}" for n in names)

    return [
        f"EntryNodes {listed(path.guards)}",
        f"MiddleNodes {listed(path.middles)}",
        f"ExitNodes {listed(path.exits)}",
    ]
