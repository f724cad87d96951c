"""Sample one network for a seed: hosts, their roles, places and bandwidths.

The plan depends on the spec and the seed only, never on the variant, so
every variant of a seed runs on the same sampled network and comparisons
between variants are paired.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import networkx as nx

from runner.datasets import country_speeds
from runner.errors import DataError
from runner.network.circuits import circuit_relays, drawn_circuits, scaled_bits
from runner.network.sampling import sample_relays, split_by_shares
from runner.spec.model import ClientGroup, LinkClass, RelayGroup, Spec, Topology, relay_name
from topologies import get_generator
from topologies.gml import check_shadow_rules, nodes_in_region

# Address blocks per kind of host; Shadow routes any address, and tor's
# TestingTorNetwork accepts these as it would public ones.
_BLOCKS = {"authority": 0, "relay": 1, "client": 2, "server": 3}


@dataclass(frozen=True)
class Host:
    name: str
    role: str  # authority, exitguard, exit, guard, middle, client, server
    cls: str  # a client's class; for other hosts, the role
    ip: str
    node_id: int
    region: str
    bandwidth_up: int  # bits/s
    bandwidth_down: int  # bits/s
    workload: str | None = None
    measured: bool = False
    link: str | None = None  # a client's link class, when its group has them
    # A client that also runs a relay, and the position it takes in the
    # consensus (middle, guard or exit).
    client_relay: bool = False
    client_relay_as: str = "middle"
    # Measured data the host was drawn from: a relay of a population
    # ("tor-2018 row 17 (US)"), a client's country speeds ("speedtest-2020 DE").
    origin: str | None = None

    @property
    def is_relay(self) -> bool:
        return self.client_relay or self.role in (
            "authority",
            "exitguard",
            "exit",
            "guard",
            "middle",
        )

    @property
    def runs_tor(self) -> bool:
        return self.role != "server"


@dataclass(frozen=True)
class NetworkPlan:
    seed: int
    graph: nx.Graph
    hosts: tuple[Host, ...]

    def with_role(self, *roles: str) -> list[Host]:
        return [h for h in self.hosts if h.role in roles]

    def in_position(self, position: str) -> list[Host]:
        """The relays the authorities flag for ``position`` (guard or exit):
        relays of that role or exitguards, and client relays placed there."""
        return [
            h
            for h in self.hosts
            if h.role in (position, "exitguard")
            or (h.client_relay and h.client_relay_as == position)
        ]

    def host(self, name: str) -> Host:
        for host in self.hosts:
            if host.name == name:
                return host
        raise KeyError(name)


def _address(kind: str, index: int) -> str:
    """The index-th address (from 1) of a kind's block: 100.<block>.<hi>.<lo>."""
    hi, lo = divmod(index - 1, 250)
    return f"100.{_BLOCKS[kind]}.{hi}.{lo + 1}"


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    return low if low == high else _speed(rng.random(), low, high)


def _speed(u: float, low: int, high: int) -> int:
    """The point ``u`` (0..1) of the way from low to high on a log scale."""
    if low == high:
        return low
    return int(round(math.exp(math.log(low) + u * (math.log(high) - math.log(low)))))


@dataclass(frozen=True)
class ClientLink:
    link: str | None  # the link class, if the group has them
    down: int  # bits/s
    up: int
    origin: str | None = None  # the data a measured speed comes from


def client_links(group: ClientGroup, rng: random.Random) -> list[ClientLink]:
    """Each client's link, in order: the classes in the exact proportions of
    their shares, shuffled."""
    if not group.links:
        return [ClientLink(None, group.bandwidth_down, group.bandwidth_up)] * group.count
    counts = split_by_shares(group.count, [link.share for link in group.links])
    kinds: list[LinkClass] = [
        link for link, n in zip(group.links, counts, strict=True) for _ in range(n)
    ]
    rng.shuffle(kinds)
    result = []
    for link in kinds:
        if link.speeds is not None:
            result.append(_measured_link(link, rng))
            continue
        u = rng.random()
        down = _speed(u, *link.down)
        up = down if link.up is None else _speed(u, *link.up)
        result.append(ClientLink(link.name, down, up))
    return result


def _measured_link(link: LinkClass, rng: random.Random) -> ClientLink:
    """A country drawn by the link class's shares, and its measured mean speeds."""
    assert link.speeds is not None
    codes = [code for code, _ in link.countries]
    country = rng.choices(codes, weights=[share for _, share in link.countries])[0]
    speeds = country_speeds(link.speeds)
    if country not in speeds:
        raise DataError(f"speed data {link.speeds} has no country {country!r} (link {link.name})")
    measured = speeds[country]
    return ClientLink(link.name, measured.down_bits, measured.up_bits, f"{link.speeds} {country}")


class _Placer:
    """Spreads a group's hosts over its regions evenly, from a random offset."""

    def __init__(self, graph: nx.Graph, rng: random.Random) -> None:
        self.graph = graph
        self.rng = rng

    def place(self, regions: tuple[str, ...], count: int) -> list[tuple[str, int]]:
        offset = self.rng.randrange(len(regions))
        places = []
        for i in range(count):
            region = regions[(offset + i) % len(regions)]
            places.append((region, self.rng.choice(nodes_in_region(self.graph, region))))
        return places


def plan_network(
    spec: Spec,
    seed: int,
    extra_clients: float = 0.0,
    topology: Topology | None = None,
    added: Mapping[str, int] | None = None,
) -> NetworkPlan:
    """The network that ``seed`` names for ``spec``; with ``extra_clients``,
    that network plus that share more clients of each class; with
    ``topology``, on that topology's links instead (a variant's own loss):
    its hosts are the same, as the generators draw the same numbers; with
    ``added``, that many clients of each class named added (drawn apart)."""
    rng = random.Random(f"{spec.name}/network/{seed}")
    topology = topology or spec.network.topology
    graph = get_generator(topology.generator).build(topology.params, rng)
    check_shadow_rules(graph)
    placer = _Placer(graph, rng)
    hosts: list[Host] = []

    # Authorities are placed in the first region: they carry almost no traffic.
    first_region = topology.regions[0]
    for i in range(1, spec.network.authorities + 1):
        hosts.append(
            Host(
                name=f"4uthority{i}",
                role="authority",
                cls="authority",
                ip=_address("authority", i),
                node_id=nodes_in_region(graph, first_region)[0],
                region=first_region,
                bandwidth_up=1_000_000_000,
                bandwidth_down=1_000_000_000,
            )
        )

    relay_number = 0
    if spec.network.circuits is not None:
        hosts += _circuit_relays(spec, seed, graph)
    for index, group in enumerate(spec.network.relays):
        if group.sample is not None:
            # A stream of its own: the draw moves no other host.
            sample_rng = random.Random(f"{spec.name}/relays/{seed}/{index}")
            drawn = _sampled_relays(group, graph, placer, sample_rng, relay_number)
        else:
            drawn = _ranged_relays(group, placer, rng, relay_number)
        hosts += drawn
        relay_number += len(drawn)

    numbers = _ClientNumbers()
    for cgroup in spec.network.clients:
        if not cgroup.count:
            continue  # a class only variants add: it draws nothing here
        # Links come from a stream of their own: adding them to a spec moves
        # no other host.
        links = random.Random(f"{spec.name}/links/{seed}/{cgroup.name}")
        hosts += _clients(cgroup, cgroup.count, placer, links, numbers)

    servers = spec.network.servers
    for i, (region, node) in enumerate(placer.place(servers.regions, servers.count), start=1):
        hosts.append(
            Host(
                name=f"server{i}exit",
                role="server",
                cls="server",
                ip=_address("server", i),
                node_id=node,
                region=region,
                bandwidth_up=servers.bandwidth,
                bandwidth_down=servers.bandwidth,
            )
        )

    if extra_clients > 0:
        hosts += _grown_clients(spec, seed, graph, extra_clients, numbers)
    if added:
        hosts += _added_clients(spec, seed, graph, added, numbers)
    return NetworkPlan(seed, graph, tuple(hosts))


def _grown_clients(
    spec: Spec, seed: int, graph: nx.Graph, extra_clients: float, numbers: _ClientNumbers
) -> list[Host]:
    """Growth: that share more clients of each class, drawn apart so that
    the network they join is the seed's network unchanged."""
    extra_rng = random.Random(f"{spec.name}/extra-clients/{seed}")
    extra_placer = _Placer(graph, extra_rng)
    hosts = []
    for cgroup in spec.network.clients:
        if not cgroup.count:
            continue  # a class only variants add: it draws nothing
        count = round(cgroup.count * extra_clients)
        hosts += _clients(cgroup, count, extra_placer, extra_rng, numbers)
    return hosts


def _added_clients(
    spec: Spec, seed: int, graph: nx.Graph, added: Mapping[str, int], numbers: _ClientNumbers
) -> list[Host]:
    """A variant's added clients, each class's drawn from a stream of its
    own, so that the network they join is the seed's network unchanged."""
    hosts = []
    for cgroup in spec.network.clients:
        if cgroup.name in added:
            rng = random.Random(f"{spec.name}/added-clients/{seed}/{cgroup.name}")
            hosts += _clients(cgroup, added[cgroup.name], _Placer(graph, rng), rng, numbers)
    return hosts


def _relay(role: str, number: int, place: tuple[str, int], bandwidth: int) -> Host:
    region, node = place
    return Host(
        name=relay_name(role, number),
        role=role,
        cls=role,
        ip=_address("relay", number),
        node_id=node,
        region=region,
        bandwidth_up=bandwidth,
        bandwidth_down=bandwidth,
    )


def _ranged_relays(
    group: RelayGroup, placer: _Placer, rng: random.Random, numbered: int
) -> list[Host]:
    """A group's relays, each with a bandwidth drawn log-uniformly in its
    range, or the one ``bandwidth_of`` gives it in every seed: drawn all the
    same, so that fixing one relay's bandwidth moves no other host."""
    hosts = []
    for i, place in enumerate(placer.place(group.regions, group.count), start=1):
        drawn = _log_uniform(rng, *group.bandwidth)
        bandwidth = group.bandwidth_of.get(relay_name(group.role, numbered + i), drawn)
        hosts.append(_relay(group.role, numbered + i, place, bandwidth))
    return hosts


def _sampled_relays(
    group: RelayGroup, graph: nx.Graph, placer: _Placer, rng: random.Random, numbered: int
) -> list[Host]:
    """A group's relays drawn from its measured population: role and
    capacity (symmetric, as tornettools' links) from the relay drawn, region
    from its country when the group maps countries to regions."""
    drawn = sample_relays(group, rng)
    if group.countries:
        places = []
        for relay in drawn:
            region = group.countries.get(relay.country, group.countries["*"])
            places.append((region, rng.choice(nodes_in_region(graph, region))))
    else:
        places = placer.place(group.regions, len(drawn))
    hosts = []
    for i, (relay, place) in enumerate(zip(drawn, places, strict=True), start=1):
        bandwidth = max(8000, round(relay.capacity_bytes * 8 * group.bandwidth_scale))
        host = _relay(relay.role, numbered + i, place, bandwidth)
        hosts.append(replace(host, origin=f"{group.sample} row {relay.row} ({relay.country})"))
    return hosts


def _circuit_relays(spec: Spec, seed: int, graph: nx.Graph) -> list[Host]:
    """The relays of the circuits the seed draws (runner.network.circuits):
    each in the region its file's region maps to, at a node of it drawn from
    a stream of its own, at its scaled rate."""
    sample = spec.network.circuits
    assert sample is not None
    rng = random.Random(f"{spec.name}/circuit-relays/{seed}")
    hosts = []
    relays = circuit_relays(drawn_circuits(spec, seed))
    for number, relay in enumerate(relays, start=1):
        region = sample.regions.get(relay.region, sample.regions["*"])
        place = (region, rng.choice(nodes_in_region(graph, region)))
        host = _relay(relay.role, number, place, scaled_bits(sample, relay.rate))
        hosts.append(replace(host, origin=f"{Path(sample.file).name} {relay.fingerprint}"))
    return hosts


@dataclass
class _ClientNumbers:
    """Running counts for client names (tornettools' style) and addresses."""

    measured: int = 0
    unmeasured: int = 0
    address: int = 0

    def next_name(self, measured: bool) -> str:
        self.address += 1
        if measured:
            self.measured += 1
            return f"perfclient{self.measured}exit"
        self.unmeasured += 1
        return f"markovclient{self.unmeasured}exit"


def _clients(
    cgroup: ClientGroup,
    count: int,
    placer: _Placer,
    link_rng: random.Random,
    numbers: _ClientNumbers,
) -> list[Host]:
    grown = replace(cgroup, count=count)
    hosts = []
    for (region, node), link in zip(
        placer.place(cgroup.regions, count), client_links(grown, link_rng), strict=True
    ):
        name = numbers.next_name(cgroup.measured)
        hosts.append(
            Host(
                name=name,
                role="client",
                cls=cgroup.name,
                ip=_address("client", numbers.address),
                node_id=node,
                region=region,
                bandwidth_up=link.up,
                bandwidth_down=link.down,
                workload=cgroup.workload,
                measured=cgroup.measured,
                link=link.link,
                origin=link.origin,
            )
        )
    return hosts
