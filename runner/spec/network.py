"""A spec's ``network:``: its topology, relays, clients (and their access
links), servers and cross traffic, checked against each other."""

from __future__ import annotations

import math
import re
from typing import Any

from runner.datasets import RELAY_POPULATIONS, SPEED_DATA
from runner.params import Param, Where, check_params
from runner.params import mapping_with_keys as _mapping
from runner.spec.keys import check_name, mapping_of, simple_values
from runner.spec.model import (
    ANY_ROLE,
    CROSS_DIRECTIONS,
    MEASURED_LINK_ONLY,
    RANGE_LINK_ONLY,
    RANGE_ONLY,
    RELAY_GROUPS,
    RELAY_ROLES,
    SAMPLED_ONLY,
    TORRC_ROLES,
    CircuitSample,
    ClientGroup,
    CrossTraffic,
    LinkClass,
    Network,
    RelayGroup,
    ServerGroup,
    Topology,
    relay_name,
)
from topologies import GENERATORS

_COUNTRY = re.compile(r"^([A-Z]{2}|\*)$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_CLASS = re.compile(r"^[a-z][a-z0-9]{0,11}$")
_POPULATIONS = ", ".join(RELAY_POPULATIONS)
# The slowest link a host can have, in bits/s.
_BANDWIDTH = Param("bandwidth", minimum=8000)


def parse_network(value: Any, where: Where) -> Network:
    body = mapping_of(Network, value, where)
    topology = parse_topology(body["topology"], where.child("topology"))
    authorities = simple_values(Network, body, where)["authorities"]
    clients = _clients(body["clients"], where.child("clients"), topology)
    circuits = None
    if body.get("circuits") is not None:
        if body.get("relays") is not None:
            raise where.child("relays").error(
                "give either 'relays' or 'circuits', not both: the circuits' relays are the "
                "network's"
            )
        circuits = _circuits(body["circuits"], where.child("circuits"), topology, clients)
        relays: tuple[RelayGroup, ...] = ()
    elif body.get("relays") is None:
        raise where.child("relays").error("required key is missing (or give 'circuits')")
    else:
        relays = _relays(body["relays"], where.child("relays"), topology)
    return Network(
        topology=topology,
        authorities=authorities,
        relays=relays,
        clients=clients,
        servers=_servers(body["servers"], where.child("servers"), topology),
        cross_traffic=_cross_traffic(body.get("cross_traffic"), where.child("cross_traffic")),
        circuits=circuits,
    )


def _circuits(
    value: Any, where: Where, topology: Topology, clients: tuple[ClientGroup, ...]
) -> CircuitSample:
    """Circuits drawn from a file: every measured client class on the bulk
    or the web circuits, none with more clients than there are circuits of
    its kind."""
    body = mapping_of(CircuitSample, value, where)
    values = simple_values(CircuitSample, body, where)
    if not _SHA256.match(values["sha256"]):
        raise where.child("sha256").error("expected the file's sha256, 64 hex digits")
    bulk_circuits = math.ceil(values["bulk_share"] * values["count"])
    kinds = {"bulk": bulk_circuits, "web": values["count"] - bulk_circuits}
    by_name = {c.name: c for c in clients}
    listed: dict[str, tuple[str, ...]] = {}
    for kind, circuits in kinds.items():
        names = Param("list:str").convert(body[kind], where.child(kind))
        for i, name in enumerate(names):
            w = where.child(kind).child(i)
            if name not in by_name or not by_name[name].measured:
                raise w.error(f"expected a measured client class of the network, got {name!r}")
            if by_name[name].count > circuits:
                raise w.error(
                    f"class {name} has {by_name[name].count} clients, more than the {circuits} "
                    f"{kind} circuits drawn (count {values['count']}, bulk_share "
                    f"{values['bulk_share']:g})"
                )
        listed[kind] = tuple(names)
    both = set(listed["bulk"]) & set(listed["web"])
    on_circuits = {*listed["bulk"], *listed["web"]}
    unlisted = [c.name for c in clients if c.measured and c.name not in on_circuits]
    if both or unlisted:
        raise where.error(
            "expected every measured client class under exactly one of 'bulk' and 'web', "
            f"each client on a circuit of its own kind: {sorted(both) or unlisted}"
        )
    start = Param("list:time", minimum=0).convert(
        body.get("start_within", [0, 0]), where.child("start_within")
    )
    if len(start) != 2 or start[0] > start[1]:
        raise where.child("start_within").error("expected [earliest, latest], e.g. [0 s, 30 s]")
    regions = _countries(body["regions"], where.child("regions"), topology.regions)
    return CircuitSample(
        **values,
        regions=regions,
        bulk=listed["bulk"],
        web=listed["web"],
        start_within=(start[0], start[1]),
    )


def parse_topology(value: Any, where: Where, params_where: Where | None = None) -> Topology:
    """A topology: its generator and the generator's parameters, checked
    (their errors named at ``params_where``, by default ``where.params``)."""
    body = mapping_of(Topology, value, where)
    generator = body["generator"]
    if generator not in GENERATORS:
        raise where.child("generator").error(
            f"unknown topology generator {generator!r} (known: {', '.join(GENERATORS)})"
        )
    module = GENERATORS[generator]
    params_where = params_where or where.child("params")
    if hasattr(module, "check"):
        params = module.check(body.get("params") or {}, params_where)
    else:
        params = check_params(body.get("params"), module.PARAMS, params_where, generator)
    return Topology(generator=generator, params=params, regions=tuple(module.regions(params)))


def _regions(value: Any, where: Where, topology: Topology) -> tuple[str, ...]:
    if value is None:
        return topology.regions
    names = Param("list:str").convert(value, where)
    for i, region in enumerate(names):
        if region not in topology.regions:
            raise where.child(i).error(
                f"unknown region {region!r} (the topology has {list(topology.regions)})"
            )
    return tuple(names)


def _bandwidth_range(value: Any, where: Where) -> tuple[int, int]:
    if isinstance(value, list):
        if len(value) != 2:
            raise where.error("expected a bandwidth or a range [low, high]")
        low, high = (_BANDWIDTH.convert(v, where.child(i)) for i, v in enumerate(value))
        if low > high:
            raise where.error("the range's low end is above its high end")
        return low, high
    single = _BANDWIDTH.convert(value, where)
    return single, single


def _relays(value: Any, where: Where, topology: Topology) -> tuple[RelayGroup, ...]:
    """The relay groups by role: enough relays, exits and guards for a circuit."""
    body = _mapping(value, where, (), RELAY_GROUPS)
    relays: list[RelayGroup] = []
    for role in RELAY_GROUPS:
        if role in body:
            # Relays are numbered on over the groups (runner.network.plan).
            first = sum(g.count for g in relays) + 1
            relays.append(_relay_group(role, body[role], where.child(role), topology, first))
    exits = sum(g.count for g in relays if g.role in ("exit", "exitguard", ANY_ROLE))
    guards = sum(g.count for g in relays if g.role in ("guard", "exitguard", ANY_ROLE))
    if exits == 0:
        raise where.error("a network needs at least one exit or exitguard relay")
    if guards == 0:
        raise where.error("a network needs at least one guard or exitguard relay")
    if sum(g.count for g in relays) < 3:
        raise where.error("a tor circuit needs at least 3 relays")
    return tuple(relays)


def _relay_group(role: str, value: Any, where: Where, topology: Topology, first: int) -> RelayGroup:
    """A relay group: a bandwidth range, or ``sample: <population>``; its
    relays numbered from ``first``."""
    if isinstance(value, dict) and "sample" in value:
        return _sampled_relay_group(role, value, where, topology)
    if role == ANY_ROLE:
        raise where.error(f"a group of any role is sampled: give 'sample' ({_POPULATIONS})")
    group = mapping_of(RelayGroup, value, where, leave_out=SAMPLED_ONLY)
    count = Param("int", minimum=0).convert(group["count"], where.child("count"))
    names = [relay_name(role, first + i) for i in range(count)]
    return RelayGroup(
        role=role,
        count=count,
        bandwidth=_bandwidth_range(group["bandwidth"], where.child("bandwidth")),
        regions=_regions(group.get("regions"), where.child("regions"), topology),
        bandwidth_of=_bandwidth_of(group.get("bandwidth_of"), where.child("bandwidth_of"), names),
    )


def _bandwidth_of(value: Any, where: Where, names: list[str]) -> dict[str, int]:
    """Relays of a group, by name, to the bandwidth each has in every seed."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not value:
        raise where.error(
            "expected a mapping of this group's relays to a bandwidth each, "
            f"e.g. {{{names[0] if names else 'relay1middle'}: 7 Mbit}}"
        )
    result = {}
    for name, bandwidth in value.items():
        w = where.child(str(name))
        if name not in names:
            relays = f"{names[0]} to {names[-1]}" if names else "it has none"
            raise w.error(f"expected a relay of this group ({relays}), got {name!r}")
        result[str(name)] = _BANDWIDTH.convert(bandwidth, w)
    return result


def _sampled_relay_group(
    role: str, value: dict[str, Any], where: Where, topology: Topology
) -> RelayGroup:
    """A relay group drawn from a measured population."""
    group = mapping_of(RelayGroup, value, where, leave_out=RANGE_ONLY)
    population = group["sample"]
    if population not in RELAY_POPULATIONS:
        raise where.child("sample").error(
            f"unknown relay population {population!r} (known: {_POPULATIONS})"
        )
    # Every role needs a relay of its own in a group of any role.
    smallest = len(RELAY_ROLES) if role == ANY_ROLE else 0
    regions = _regions(group.get("regions"), where.child("regions"), topology)
    return RelayGroup(
        role=role,
        count=Param("int", minimum=smallest).convert(group["count"], where.child("count")),
        bandwidth=(0, 0),
        regions=regions,
        sample=population,
        bandwidth_scale=simple_values(RelayGroup, group, where)["bandwidth_scale"],
        countries=_countries(group.get("countries"), where.child("countries"), regions),
    )


def _countries(value: Any, where: Where, regions: tuple[str, ...]) -> dict[str, str]:
    """Country code (or "*", every other country) to region."""
    if value is None:
        return {}
    if not isinstance(value, dict) or "*" not in value:
        raise where.error(
            "expected a mapping of country code to region with a '*' entry for every "
            "other country, e.g. {US: na, CA: na, '*': eu}"
        )
    result = {}
    for code, region in value.items():
        w = where.child(str(code))
        if not _COUNTRY.match(str(code)):
            raise w.error("expected a two-letter country code such as US, or '*'")
        if region not in regions:
            raise w.error(f"unknown region {region!r} (this group's regions: {list(regions)})")
        result[str(code)] = str(region)
    return result


def _clients(value: Any, where: Where, topology: Topology) -> tuple[ClientGroup, ...]:
    if not isinstance(value, dict) or not value:
        raise where.error("expected a mapping of client classes (at least one)")
    return tuple(
        _client_group(name, group, where.child(str(name)), topology)
        for name, group in value.items()
    )


def _client_group(name: Any, value: Any, where: Where, topology: Topology) -> ClientGroup:
    """A client class: its bandwidths, given or set by its link classes."""
    cls = check_name(name, where, _CLASS)
    if cls in TORRC_ROLES:
        raise where.error(f"a client class may not be called like a role ({cls!r})")
    group = mapping_of(ClientGroup, value, where)
    links = _links(group.get("links"), where.child("links"))
    if not links and "bandwidth" not in group:
        raise where.child("bandwidth").error("required key is missing (or give 'links')")
    if links and ("bandwidth" in group or "bandwidth_up" in group):
        raise where.child("links").error("give either 'links' or 'bandwidth', not both")
    if links:  # each client's speeds come from its link class
        down = up = max(links[0].down[0], 8000)
    else:
        down = _BANDWIDTH.convert(group["bandwidth"], where.child("bandwidth"))
        up = _BANDWIDTH.convert(
            group.get("bandwidth_up", group["bandwidth"]), where.child("bandwidth_up")
        )
    return ClientGroup(
        name=cls,
        **simple_values(ClientGroup, group, where),
        workload=check_name(group["workload"], where.child("workload")),
        bandwidth_down=down,
        bandwidth_up=up,
        regions=_regions(group.get("regions"), where.child("regions"), topology),
        links=links,
    )


def _links(value: Any, where: Where) -> tuple[LinkClass, ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not value:
        raise where.error("expected a mapping of link classes, e.g. residential: {share: 0.9, ...}")
    links = []
    for name, body_value in value.items():
        w = where.child(str(name))
        if isinstance(body_value, dict) and "speeds" in body_value:
            links.append(_measured_link(str(name), body_value, w))
            continue
        body = mapping_of(LinkClass, body_value, w, leave_out=MEASURED_LINK_ONLY)
        up = body.get("bandwidth_up")
        links.append(
            LinkClass(
                name=check_name(name, w),
                **simple_values(LinkClass, body, w),
                down=_bandwidth_range(body["bandwidth"], w.child("bandwidth")),
                up=None if up is None else _bandwidth_range(up, w.child("bandwidth_up")),
            )
        )
    total = sum(link.share for link in links)
    if abs(total - 1.0) > 1e-6:
        raise where.error(f"the shares must add up to 1 (they add up to {total:g})")
    return tuple(links)


def _measured_link(name: str, value: dict[str, Any], where: Where) -> LinkClass:
    """A link class whose speeds come from a data set, by country."""
    body = mapping_of(LinkClass, value, where, leave_out=RANGE_LINK_ONLY)
    if body["speeds"] not in SPEED_DATA:
        raise where.child("speeds").error(
            f"unknown speed data {body['speeds']!r} (known: {', '.join(SPEED_DATA)})"
        )
    countries = _country_shares(body["countries"], where.child("countries"))
    return LinkClass(
        name=check_name(name, where),
        **simple_values(LinkClass, body, where),
        down=(0, 0),
        up=None,
        speeds=str(body["speeds"]),
        countries=countries,
    )


def _country_shares(value: Any, where: Where) -> tuple[tuple[str, float], ...]:
    """Country code to the share of a link class's clients there."""
    if not isinstance(value, dict) or not value:
        raise where.error("expected a mapping of country code to share, e.g. {US: 0.6, DE: 0.4}")
    countries = []
    for code, raw in value.items():
        if not _COUNTRY.match(str(code)) or code == "*":
            raise where.child(str(code)).error("expected a two-letter country code such as US")
        share = Param("float", minimum=0.0, maximum=1.0).convert(raw, where.child(str(code)))
        countries.append((str(code), share))
    total = sum(share for _, share in countries)
    if abs(total - 1.0) > 1e-6:
        raise where.error(f"the shares must add up to 1 (they add up to {total:g})")
    return tuple(countries)


def _servers(value: Any, where: Where, topology: Topology) -> ServerGroup:
    body = mapping_of(ServerGroup, value, where)
    return ServerGroup(
        **simple_values(ServerGroup, body, where),
        regions=_regions(body.get("regions"), where.child("regions"), topology),
    )


def _cross_traffic(value: Any, where: Where) -> CrossTraffic | None:
    if value is None:
        return None
    body = mapping_of(CrossTraffic, value, where)
    roles = Param("list:str").convert(body["relays"], where.child("relays"))
    for i, role in enumerate(roles):
        if role not in RELAY_ROLES:
            raise (
                where.child("relays")
                .child(i)
                .error(f"expected a relay role ({', '.join(RELAY_ROLES)}), got {role!r}")
            )
    direction = body.get("direction", "down")
    if direction not in CROSS_DIRECTIONS:
        raise where.child("direction").error(
            f"expected one of {', '.join(CROSS_DIRECTIONS)}, got {direction!r}"
        )
    return CrossTraffic(
        roles=tuple(roles), **simple_values(CrossTraffic, body, where), direction=direction
    )
