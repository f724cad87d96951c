"""Experiment specs: load a YAML file, validate every key, return plain data.

Nothing is written and nothing runs until a spec has passed here; each
problem is reported as ``file: key: what was expected``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from runner.datasets import RELAY_POPULATIONS, SPEED_DATA
from runner.errors import SpecError
from runner.params import Param, Where, check_params
from runner.params import mapping_with_keys as _mapping
from runner.spec.claims import ClaimsLedger, check_ledger, parse_ledger
from runner.spec.consensus import known_consensus_params, unknown_param_message
from runner.spec.expect import ExpectKey, parse_expect
from runner.spec.hypotheses import Hypothesis, parse_hypotheses
from runner.spec.keep_up import KeepUp, parse_keep_up
from runner.spec.matrix import FACTORS, expand_spec
from runner.spec.measured import MeasuredParam, check_references, parse_measured
from runner.units import human_size, short
from topologies import GENERATORS
from workloads.models import MODELS

RELAY_ROLES = ("exitguard", "exit", "guard", "middle")
# A relay group is named by its role, or "any": relays sampled from a
# measured population take their roles from its flags.
ANY_ROLE = "any"
RELAY_GROUPS = (*RELAY_ROLES, ANY_ROLE)
_COUNTRY = re.compile(r"^([A-Z]{2}|\*)$")
# Roles a variant's torrc lines can target; client classes may be named too.
TORRC_ROLES = ("all", "authority", "relay", *RELAY_ROLES, "client")
TOR_BUILDS = ("stock", "patched")  # Debian's tor, or `make tor`'s build
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,39}$")
_CLASS = re.compile(r"^[a-z][a-z0-9]{0,11}$")
_TORRC_LINE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\s+\S.*)?$")
_CONSENSUS_PARAM = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Topology:
    generator: str
    params: dict[str, Any]
    regions: tuple[str, ...]


@dataclass(frozen=True)
class RelayGroup:
    role: str  # one of RELAY_GROUPS
    count: int
    bandwidth: tuple[int, int]  # bits/s, sampled log-uniformly in [low, high]
    regions: tuple[str, ...]
    # Drawn from a measured population (runner.datasets) instead:
    # its name, a factor on the measured capacities, and which region each
    # relay's country goes to ("*": every other country).
    sample: str | None = None
    bandwidth_scale: float = 1.0
    countries: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LinkClass:
    """A kind of access link (residential, institutional, ...): the share of
    a client group that has it and its speeds, sampled log-uniformly in the
    ranges. One draw places a client in both ranges, so a faster downlink
    goes with a faster uplink; without an uplink range the link is symmetric.

    Or, with ``speeds`` (a data set of runner.datasets), each client
    draws a country from ``countries`` (code, share) and gets that country's
    measured mean download and upload speeds."""

    name: str
    share: float
    down: tuple[int, int]  # bits/s
    up: tuple[int, int] | None
    speeds: str | None = None
    countries: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class ClientGroup:
    name: str  # the class: perf, web, bulk, ...
    count: int
    workload: str
    bandwidth_down: int
    bandwidth_up: int
    regions: tuple[str, ...]
    measured: bool
    links: tuple[LinkClass, ...] = ()  # if given, these set the bandwidths


@dataclass(frozen=True)
class ServerGroup:
    count: int
    bandwidth: int
    regions: tuple[str, ...]
    port: int


@dataclass(frozen=True)
class CrossTraffic:
    """Competing flows that are not Tor's: on every relay of ``roles``, a
    tgen process keeps ``flows`` bulk TCP transfers of ``size`` going, back
    to back, directly with the servers. They run on the relay's own host,
    so they share its access link with its Tor connections: Shadow gives
    links to hosts, not to the graph's edges, so a host beside the relay
    could not share its bottleneck."""

    roles: tuple[str, ...]
    flows: int
    size: int  # bytes per transfer
    direction: str  # down (server to relay host), up, or both (half each)


CROSS_DIRECTIONS = ("down", "up", "both")


@dataclass(frozen=True)
class Network:
    topology: Topology
    authorities: int
    relays: tuple[RelayGroup, ...]
    clients: tuple[ClientGroup, ...]
    servers: ServerGroup
    cross_traffic: CrossTraffic | None = None


@dataclass(frozen=True)
class Workload:
    name: str
    model: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Variant:
    name: str
    tor: str
    torrc: dict[str, tuple[str, ...]]
    consensus: dict[str, int]
    description: str = ""
    # What the experiments' checks expect of the variant's runs, by the keys
    # the registered experiments declare (runner.spec.expect).
    expect: dict[str, int] = field(default_factory=dict)
    # Mixed networks: a torrc section's lines go to this share of the hosts
    # it names (chosen per seed, the same for every variant).
    fractions: dict[str, float] = field(default_factory=dict)
    # Share of each client class whose clients also run a relay.
    client_relays: dict[str, float] = field(default_factory=dict)
    # Growth: this share more clients of each class, on the same relays.
    extra_clients: float = 0.0
    # At most this many clients of each class named (the first ones): a
    # variant can leave out clients the network has, keeping the rest as
    # they are.
    clients: dict[str, int] = field(default_factory=dict)
    # Cross-traffic flows per relay in this variant, instead of the
    # network's count (0: none); None keeps the network's.
    cross_flows: int | None = None
    # The variant's level of each factor, when it comes from a matrix.
    factors: dict[str, str] = field(default_factory=dict)
    # Torrc lines that open the network beyond its own hosts (an exit policy
    # accepting every address, a SOCKS or control port on another address)
    # are meant: the local backend runs them (runner.network.exposure).
    opens_network: bool = False
    # The position client relays take in the consensus: middle, guard or
    # exit (an exit's policy reaches only the experiment's servers).
    client_relay_role: str = "middle"
    # Consensus parameters set per seed from what another variant's clients
    # got on that seed (runner.spec.measured).
    consensus_from: dict[str, MeasuredParam] = field(default_factory=dict)
    # The topology the variant runs on, when its ``topology:`` changes the
    # network's parameters (loss on a link as a factor); None: the network's.
    topology: Topology | None = None

    def client_torrc(self, cls: str) -> tuple[str, ...]:
        """The lines a client of class ``cls`` (one that runs no relay) gets,
        in its torrc's order."""
        return tuple(line for part in client_sections(cls) for line in self.torrc.get(part, ()))


def client_sections(cls: str) -> list[str]:
    """The torrc sections a client of class ``cls`` that runs no relay
    reads, in order: all, client, then its class."""
    return ["all", "client", cls]


# The group of clients that also run a relay (variants' client_relays).
CLIENT_RELAY = "client-relay"
# The positions a client relay can take (variants' client_relay_role).
CLIENT_RELAY_ROLES = ("middle", "guard", "exit")


def client_relay_load_role(position: str) -> str:
    """The role client relays in ``position`` are counted under in the load
    table (relay_load.csv)."""
    return f"{CLIENT_RELAY}-{position}"


# Every role the load table can name, in the order reports list them.
LOAD_ROLES = (*RELAY_ROLES, *(client_relay_load_role(p) for p in CLIENT_RELAY_ROLES))


# What the rounds after the first run (seeds: {later: ...}): every variant,
# or only the variants that the hypotheses still undetermined compare.
LATER_ROUNDS = ("all", "hypotheses")


@dataclass(frozen=True)
class SeedRounds:
    """``seeds: {min, max, step, later}``: run ``min`` seeds (default 5), then
    ``step`` (default 2) more at a time until every hypothesis is decisive
    or ``max`` seeds have run. With ``later: hypotheses`` the first round
    runs every variant (the report's tables) and the later ones only what
    the undetermined hypotheses need."""

    min: int
    max: int
    step: int
    later: str = "all"


@dataclass(frozen=True)
class Duration:
    bootstrap: float  # seconds of simulated time before traffic starts
    measure: float  # seconds of traffic
    # Seconds of traffic on the local backend, which runs in real time (its
    # bootstrap lasts as long as the network takes).
    local_measure: float = 0.0


@dataclass(frozen=True)
class Checks:
    min_completion: float  # per measured client and run
    min_transfers_per_size: int = 0  # completed, per measured client, run and size
    # Complete rounds of each phase, per measured client and run (the
    # rounds workload): fewer cannot say how long a round takes.
    min_rounds_per_phase: int = 0
    # Relay role (or "relays": all) -> the range its relays' mean utilisation
    # over the measured period must be in, per run (the load check).
    load: dict[str, tuple[float, float]] = field(default_factory=dict)
    # The variants the load check holds for (empty: every variant). A
    # mechanism that throttles traffic lowers the load by its own effect;
    # the network's calibration is checked under the references.
    load_variants: tuple[str, ...] = ()
    # Variants that must keep up with a reference run on the same seed
    # (runner.spec.keep_up): a mechanism must not starve the path.
    keep_up: tuple[KeepUp, ...] = ()


@dataclass(frozen=True)
class Spec:
    name: str
    description: str
    path: str
    sha256: str
    seeds: tuple[int, ...]  # with seed_rounds, the first round's: 1..min
    baseline: str
    duration: Duration
    network: Network
    workloads: dict[str, Workload]
    variants: tuple[Variant, ...]
    checks: Checks
    comparisons: tuple[tuple[str, str], ...] = ()  # (variant, reference) pairs
    hypotheses: tuple[Hypothesis, ...] = ()
    seed_rounds: SeedRounds | None = None
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)
    # The seeds of the variants that run at fewer than ``seeds`` (seed rounds
    # with ``later: hypotheses``); ``seeds`` is then every seed any variant ran.
    variant_seeds: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # The published claims the hypotheses test and those the spec cannot
    # (runner.spec.claims); None if it names none.
    claims: ClaimsLedger | None = None

    def variant(self, name: str) -> Variant:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise KeyError(name)

    def seeds_of(self, variant: str) -> tuple[int, ...]:
        """The seeds ``variant`` runs at."""
        return self.variant_seeds.get(variant, self.seeds)

    def runs(self) -> list[tuple[Variant, int]]:
        """Every (variant, seed) the spec runs, seed by seed."""
        return [(v, s) for s in self.seeds for v in self.variants if s in self.seeds_of(v.name)]

    @property
    def stop_time(self) -> float:
        return self.duration.bootstrap + self.duration.measure

    def class_sizes(self) -> dict[str, tuple[int, ...]]:
        """The transfer sizes each client class's workload asks for."""
        sizes: dict[str, tuple[int, ...]] = {}
        for group in self.network.clients:
            params = self.workloads[group.workload].params
            if self.workloads[group.workload].model == "markov":
                sizes[group.name] = ()  # the models draw every size
            elif "phases" in params:  # rounds: the sizes clients download
                sizes[group.name] = tuple(
                    sorted({p.size for p in params["phases"] if p.direction == "down"})
                )
            else:
                sizes[group.name] = (
                    tuple(params["sizes"]) if "sizes" in params else (params["size"],)
                )
        return sizes


def _value(value: Any, where: Where, param: Param) -> Any:
    return param.convert(value, where)


def _name(value: Any, where: Where, pattern: re.Pattern[str] = _NAME) -> str:
    if not isinstance(value, str) or not pattern.match(value):
        raise where.error(f"expected a name matching {pattern.pattern}, got {value!r}")
    return value


def _regions(value: Any, where: Where, topology: Topology) -> tuple[str, ...]:
    if value is None:
        return topology.regions
    names = _value(value, where, Param("list:str"))
    for i, region in enumerate(names):
        if region not in topology.regions:
            raise where.child(i).error(
                f"unknown region {region!r} (the topology has {list(topology.regions)})"
            )
    return tuple(names)


def _bandwidth_range(value: Any, where: Where) -> tuple[int, int]:
    one = Param("bandwidth", minimum=8000)
    if isinstance(value, list):
        if len(value) != 2:
            raise where.error("expected a bandwidth or a range [low, high]")
        low, high = (one.convert(v, where.child(i)) for i, v in enumerate(value))
        if low > high:
            raise where.error("the range's low end is above its high end")
        return low, high
    single = one.convert(value, where)
    return single, single


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
        body = _mapping(body_value, w, ("share", "bandwidth"), ("bandwidth_up",))
        up = body.get("bandwidth_up")
        links.append(
            LinkClass(
                name=_name(name, w),
                share=_value(body["share"], w.child("share"), Param("float", minimum=0.0)),
                down=_bandwidth_range(body["bandwidth"], w.child("bandwidth")),
                up=None if up is None else _bandwidth_range(up, w.child("bandwidth_up")),
            )
        )
    total = sum(link.share for link in links)
    if abs(total - 1.0) > 1e-6:
        raise where.error(f"the shares must add up to 1 (they add up to {total:g})")
    return tuple(links)


def _relay_group(role: str, value: Any, where: Where, topology: Topology) -> RelayGroup:
    """A relay group: a bandwidth range, or ``sample: <population>``."""
    if not (isinstance(value, dict) and "sample" in value):
        if role == ANY_ROLE:
            raise where.error(f"a group of any role is sampled: give 'sample' ({_POPULATIONS})")
        group = _mapping(value, where, ("count", "bandwidth"), ("regions",))
        return RelayGroup(
            role=role,
            count=_value(group["count"], where.child("count"), Param("int", minimum=0)),
            bandwidth=_bandwidth_range(group["bandwidth"], where.child("bandwidth")),
            regions=_regions(group.get("regions"), where.child("regions"), topology),
        )
    group = _mapping(value, where, ("count", "sample"), ("regions", "countries", "bandwidth_scale"))
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
        count=_value(group["count"], where.child("count"), Param("int", minimum=smallest)),
        bandwidth=(0, 0),
        regions=regions,
        sample=population,
        bandwidth_scale=_value(
            group.get("bandwidth_scale", 1.0),
            where.child("bandwidth_scale"),
            Param("float", minimum=0.001, maximum=1000.0),
        ),
        countries=_countries(group.get("countries"), where.child("countries"), regions),
    )


_POPULATIONS = ", ".join(RELAY_POPULATIONS)


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


def _measured_link(name: str, value: dict[str, Any], where: Where) -> LinkClass:
    """A link class whose speeds come from a data set, by country."""
    body = _mapping(value, where, ("share", "speeds", "countries"), ())
    if body["speeds"] not in SPEED_DATA:
        raise where.child("speeds").error(
            f"unknown speed data {body['speeds']!r} (known: {', '.join(SPEED_DATA)})"
        )
    cw = where.child("countries")
    if not isinstance(body["countries"], dict) or not body["countries"]:
        raise cw.error("expected a mapping of country code to share, e.g. {US: 0.6, DE: 0.4}")
    countries = []
    for code, raw in body["countries"].items():
        if not _COUNTRY.match(str(code)) or code == "*":
            raise cw.child(str(code)).error("expected a two-letter country code such as US")
        share = _value(raw, cw.child(str(code)), Param("float", minimum=0.0, maximum=1.0))
        countries.append((str(code), share))
    total = sum(share for _, share in countries)
    if abs(total - 1.0) > 1e-6:
        raise cw.error(f"the shares must add up to 1 (they add up to {total:g})")
    return LinkClass(
        name=_name(name, where),
        share=_value(body["share"], where.child("share"), Param("float", minimum=0.0)),
        down=(0, 0),
        up=None,
        speeds=str(body["speeds"]),
        countries=tuple(countries),
    )


def _topology(value: Any, where: Where, params_where: Where | None = None) -> Topology:
    body = _mapping(value, where, ("generator",), ("params",))
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
    return Topology(generator, params, tuple(module.regions(params)))


def _network(value: Any, where: Where) -> Network:
    body = _mapping(
        value, where, ("topology", "relays", "clients", "servers"), ("authorities", "cross_traffic")
    )
    topology = _topology(body["topology"], where.child("topology"))
    authorities = _value(
        body.get("authorities", 1), where.child("authorities"), Param("int", minimum=1, maximum=9)
    )

    relays_where = where.child("relays")
    relays_body = _mapping(body["relays"], relays_where, (), RELAY_GROUPS)
    relays = [
        _relay_group(role, relays_body[role], relays_where.child(role), topology)
        for role in RELAY_GROUPS
        if role in relays_body
    ]
    exits = sum(g.count for g in relays if g.role in ("exit", "exitguard", ANY_ROLE))
    guards = sum(g.count for g in relays if g.role in ("guard", "exitguard", ANY_ROLE))
    if exits == 0:
        raise relays_where.error("a network needs at least one exit or exitguard relay")
    if guards == 0:
        raise relays_where.error("a network needs at least one guard or exitguard relay")
    if sum(g.count for g in relays) < 3:
        raise relays_where.error("a tor circuit needs at least 3 relays")

    clients_where = where.child("clients")
    if not isinstance(body["clients"], dict) or not body["clients"]:
        raise clients_where.error("expected a mapping of client classes (at least one)")
    clients = []
    for name, group_value in body["clients"].items():
        w = clients_where.child(str(name))
        cls = _name(name, w, _CLASS)
        if cls in TORRC_ROLES:
            raise w.error(f"a client class may not be called like a role ({cls!r})")
        group = _mapping(
            group_value,
            w,
            ("count", "workload"),
            ("bandwidth", "regions", "measured", "bandwidth_up", "links"),
        )
        links = _links(group.get("links"), w.child("links"))
        if not links and "bandwidth" not in group:
            raise w.child("bandwidth").error("required key is missing (or give 'links')")
        if links and ("bandwidth" in group or "bandwidth_up" in group):
            raise w.child("links").error("give either 'links' or 'bandwidth', not both")
        one = Param("bandwidth", minimum=8000)
        if links:  # each client's speeds come from its link class
            down = up = max(links[0].down[0], 8000)
        else:
            down = _value(group["bandwidth"], w.child("bandwidth"), one)
            up = _value(group.get("bandwidth_up", group["bandwidth"]), w.child("bandwidth_up"), one)
        clients.append(
            ClientGroup(
                name=cls,
                count=_value(group["count"], w.child("count"), Param("int", minimum=1)),
                workload=_name(group["workload"], w.child("workload")),
                bandwidth_down=down,
                bandwidth_up=up,
                regions=_regions(group.get("regions"), w.child("regions"), topology),
                measured=_value(group.get("measured", True), w.child("measured"), Param("bool")),
                links=links,
            )
        )

    servers_where = where.child("servers")
    sbody = _mapping(body["servers"], servers_where, ("count", "bandwidth"), ("regions", "port"))
    servers = ServerGroup(
        count=_value(sbody["count"], servers_where.child("count"), Param("int", minimum=1)),
        bandwidth=_value(
            sbody["bandwidth"], servers_where.child("bandwidth"), Param("bandwidth", minimum=8000)
        ),
        regions=_regions(sbody.get("regions"), servers_where.child("regions"), topology),
        port=_value(
            sbody.get("port", 80),
            servers_where.child("port"),
            Param("int", minimum=1, maximum=65535),
        ),
    )
    return Network(
        topology,
        authorities,
        tuple(relays),
        tuple(clients),
        servers,
        _cross_traffic(body.get("cross_traffic"), where.child("cross_traffic"), relays),
    )


def _cross_traffic(value: Any, where: Where, relays: list[RelayGroup]) -> CrossTraffic | None:
    if value is None:
        return None
    body = _mapping(value, where, ("relays", "flows"), ("size", "direction"))
    roles = _value(body["relays"], where.child("relays"), Param("list:str"))
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
        roles=tuple(roles),
        flows=_value(body["flows"], where.child("flows"), Param("int", minimum=1, maximum=64)),
        size=_value(body.get("size", "5 MiB"), where.child("size"), Param("size", minimum=1)),
        direction=direction,
    )


def _workloads(value: Any, where: Where) -> dict[str, Workload]:
    if not isinstance(value, dict) or not value:
        raise where.error("expected a mapping of workloads (at least one)")
    result = {}
    for name, body_value in value.items():
        w = where.child(str(name))
        body = _mapping(body_value, w, ("model",), ("params",))
        model = body["model"]
        if model not in MODELS:
            raise w.child("model").error(
                f"unknown workload model {model!r} (known: {', '.join(MODELS)})"
            )
        params = check_params(body.get("params"), MODELS[model].PARAMS, w.child("params"), model)
        result[_name(name, w)] = Workload(str(name), model, params)
    return result


def _variants(
    value: Any,
    where: Where,
    client_classes: set[str],
    new_params: frozenset[str] = frozenset(),
    expect_keys: Sequence[ExpectKey] = (),
    topology: tuple[Topology, Any] | None = None,
) -> tuple[Variant, ...]:
    if not isinstance(value, dict) or not value:
        raise where.error("expected a mapping of variants (at least one)")
    variants = []
    for name, body_value in value.items():
        w = where.child(str(name))
        _name(name, w)
        body = _mapping(
            body_value or {},
            w,
            (),
            (
                "tor",
                "torrc",
                "consensus",
                "description",
                "expect",
                "fractions",
                "client_relays",
                "extra_clients",
                "clients",
                "cross_flows",
                "opens_network",
                "client_relay_role",
                "consensus_from",
                "topology",
                FACTORS,
            ),
        )
        tor = body.get("tor", "stock")
        if tor not in TOR_BUILDS:
            raise w.child("tor").error(f"expected one of {', '.join(TOR_BUILDS)}, got {tor!r}")
        torrc: dict[str, tuple[str, ...]] = {}
        torrc_where = w.child("torrc")
        torrc_body = body.get("torrc") or {}
        if not isinstance(torrc_body, dict):
            raise torrc_where.error("expected a mapping of role to a list of torrc lines")
        for role, lines in torrc_body.items():
            rw = torrc_where.child(str(role))
            if role not in TORRC_ROLES and role not in client_classes:
                known = ", ".join((*TORRC_ROLES, *sorted(client_classes)))
                raise rw.error(f"unknown role (expected one of: {known})")
            if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
                raise rw.error("expected a list of torrc lines such as 'NumEntryGuards 1'")
            for i, line in enumerate(lines):
                control = next((c for c in line if _is_control(c)), None)
                if control is not None:
                    raise rw.child(i).error(
                        f"expected one torrc line without control characters, got "
                        f"{short(line)} (U+{ord(control):04X})"
                    )
                if not _TORRC_LINE.match(line.strip()):
                    raise rw.child(i).error(
                        f"expected one torrc line 'Option value', got {short(line)}"
                    )
                if line.split()[0].lower() == "consensusparams":
                    raise rw.child(i).error(
                        "set consensus parameters under the variant's 'consensus' key"
                    )
            torrc[str(role)] = tuple(line.strip() for line in lines)
        consensus: dict[str, int] = {}
        cw = w.child("consensus")
        consensus_body = body.get("consensus") or {}
        if not isinstance(consensus_body, dict):
            raise cw.error("expected a mapping of consensus parameter to integer")

        def known_param(key: str, where: Where) -> None:
            if not _CONSENSUS_PARAM.match(key):
                raise where.error("expected a consensus parameter name")
            if key not in known_consensus_params() and key not in new_params:
                raise where.error(unknown_param_message(key))

        for key, raw in consensus_body.items():
            known_param(str(key), cw.child(str(key)))
            consensus[str(key)] = _value(
                raw, cw.child(str(key)), Param("int", minimum=-(2**31), maximum=2**31 - 1)
            )
        description = body.get("description", "")
        if not isinstance(description, str):
            raise w.child("description").error("expected a string")
        expect = parse_expect(body.get("expect"), w.child("expect"), expect_keys)
        fractions = _shares(body.get("fractions"), w.child("fractions"), set(torrc))
        client_relays = _shares(body.get("client_relays"), w.child("client_relays"), client_classes)
        extra = _value(
            body.get("extra_clients", 0.0),
            w.child("extra_clients"),
            Param("float", minimum=0.0, maximum=10.0),
        )
        variants.append(
            Variant(
                str(name),
                tor,
                torrc,
                consensus,
                description.strip(),
                expect,
                fractions,
                client_relays,
                extra,
                _client_caps(body.get("clients"), w.child("clients"), client_classes),
                None
                if body.get("cross_flows") is None
                else _value(
                    body["cross_flows"], w.child("cross_flows"), Param("int", minimum=0, maximum=64)
                ),
                _factor_levels(body.get(FACTORS), w.child(FACTORS)),
                _value(body.get("opens_network", False), w.child("opens_network"), Param("bool")),
                _value(
                    body.get("client_relay_role", "middle"),
                    w.child("client_relay_role"),
                    Param("str", choices=CLIENT_RELAY_ROLES),
                ),
                parse_measured(
                    body.get("consensus_from"),
                    w.child("consensus_from"),
                    client_classes,
                    known_param,
                ),
                _variant_topology(body.get("topology"), w.child("topology"), topology),
            )
        )
    return tuple(variants)


def _variant_topology(
    value: Any, where: Where, network: tuple[Topology, Any] | None
) -> Topology | None:
    """A variant's ``topology:``: parameters that replace the network's
    (``packet_loss`` as a factor), validated as the network's are."""
    if value is None:
        return None
    if not isinstance(value, dict) or not value or network is None:
        raise where.error(
            "expected a mapping of topology parameters, e.g. {packet_loss: {a-b: 0.0001}}"
        )
    topology, given = network
    merged = {**(given or {}), **value}
    return _topology({"generator": topology.generator, "params": merged}, where, params_where=where)


def _is_control(char: str) -> bool:
    """A character that has no place in a torrc line (a tab separates words)."""
    return (ord(char) < 32 and char != "\t") or ord(char) == 127


def _factor_levels(value: Any, where: Where) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise where.error("expected a mapping of factor to level, e.g. {scenario: tree}")
    return dict(value)


def _by_name(
    value: Any, where: Where, names: set[str], param: Param, what: tuple[str, str]
) -> dict[str, Any]:
    """A mapping of name (one of ``names``) to a ``param`` value; ``what``
    is (the mapping, a key) as error messages name them."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise where.error(f"expected a mapping of {what[0]}")
    result = {}
    for key, raw in value.items():
        if str(key) not in names:
            known = ", ".join(sorted(names)) or "none"
            raise where.child(str(key)).error(f"unknown {what[1]} (expected one of: {known})")
        result[str(key)] = _value(raw, where.child(str(key)), param)
    return result


def _shares(value: Any, where: Where, names: set[str]) -> dict[str, float]:
    """A mapping of name (one of ``names``) to a share in [0, 1]."""
    return _by_name(
        value,
        where,
        names,
        Param("float", minimum=0.0, maximum=1.0),
        ("name to a share between 0 and 1", "name"),
    )


def _client_caps(value: Any, where: Where, classes: set[str]) -> dict[str, int]:
    """A mapping of client class to the most clients of it a variant keeps."""
    return _by_name(
        value,
        where,
        classes,
        Param("int", minimum=0),
        ("client class to a number of clients", "client class"),
    )


def _comparisons(
    value: Any, where: Where, names: list[str], baseline: str
) -> tuple[tuple[str, str], ...]:
    """(variant, reference) pairs to compare; by default each variant against the baseline."""
    if value is None:
        return tuple((v, baseline) for v in names if v != baseline)
    if not isinstance(value, list) or not value:
        raise where.error("expected a list of [variant, reference] pairs")
    pairs = []
    for i, pair in enumerate(value):
        pw = where.child(i)
        if not isinstance(pair, list) or len(pair) != 2 or pair[0] == pair[1]:
            raise pw.error("expected a pair [variant, reference] of two different variants")
        for name in pair:
            if name not in names:
                raise pw.error(f"unknown variant {name!r} (variants: {names})")
        pairs.append((str(pair[0]), str(pair[1])))
    return tuple(pairs)


# Seeds of the first round unless the spec says otherwise: under five, a
# verdict rests on the seeds' spread being normal (runner/analyses/answers.py).
DEFAULT_FIRST_SEEDS = 5


def _seeds(value: Any, where: Where) -> tuple[tuple[int, ...], SeedRounds | None]:
    """A list of seeds, or {min, max, step, later}: seeds 1..min first, more in rounds."""
    if isinstance(value, dict):
        body = _mapping(value, where, ("max",), ("min", "step", "later"))
        low = _value(
            body.get("min", DEFAULT_FIRST_SEEDS), where.child("min"), Param("int", minimum=2)
        )
        high = _value(body["max"], where.child("max"), Param("int", minimum=low))
        step = _value(body.get("step", 2), where.child("step"), Param("int", minimum=1))
        later = body.get("later", "all")
        if later not in LATER_ROUNDS:
            raise where.child("later").error(
                f"expected one of {', '.join(LATER_ROUNDS)} (what the rounds after the "
                f"first run), got {later!r}"
            )
        return tuple(range(1, low + 1)), SeedRounds(low, high, step, later)
    seeds = _value(value, where, Param("list:int", minimum=0))
    if len(set(seeds)) != len(seeds):
        raise where.error("seeds must be distinct")
    return tuple(seeds), None


ALL_RELAYS = "relays"  # checks.load's key for every relay
BUSIEST = "busiest "  # checks.load's prefix for the busiest relay of a role


def _load_ranges(value: Any, where: Where) -> dict[str, tuple[float, float]]:
    """checks.load: relay role (or "relays") -> [low, high] mean utilisation
    of those relays; "busiest <role>" -> the range for the busiest one."""
    if value is None:
        return {}
    roles = (ALL_RELAYS, *RELAY_ROLES)
    body = _mapping(value, where, (), (*roles, *(BUSIEST + r for r in roles)))
    ranges = {}
    for role, raw in body.items():
        w = where.child(role)
        pair = _value(raw, w, Param("list:share", minimum=0.0, maximum=1.0))
        if len(pair) != 2 or pair[0] > pair[1]:
            raise w.error("expected a range [low, high] of utilisation, e.g. [50%, 90%]")
        ranges[role] = (pair[0], pair[1])
    return ranges


def _load_variants(value: Any, where: Where, names: list[str]) -> tuple[str, ...]:
    """checks.load_variants: the variants the load check holds for."""
    if value is None:
        return ()
    chosen = _value(value, where, Param("list:str"))
    if not chosen:
        raise where.error("expected a non-empty list of variants (or leave the key out)")
    for i, name in enumerate(chosen):
        if name not in names:
            raise where.child(i).error(f"expected one of the variants {names}, got {name!r}")
    return tuple(chosen)


TOP_REQUIRED = ("name", "seeds", "duration", "network", "workloads", "variants")
TOP_OPTIONAL = (
    "description",
    "baseline",
    "checks",
    "comparisons",
    "hypotheses",
    "claims",
    "new_consensus_params",
)


def _new_params(value: Any, where: Where) -> frozenset[str]:
    """Consensus parameters a spec uses that tor-patches/consensus-params.txt
    does not list yet (a patch in progress): said on purpose, not by a typo."""
    if value is None:
        return frozenset()
    names = _value(value, where, Param("list:str"))
    for i, name in enumerate(names):
        if not _CONSENSUS_PARAM.match(name):
            raise where.child(i).error("expected a consensus parameter name")
    return frozenset(names)


def parse_spec(
    data: Any, path: str, sha256: str = "", expect_keys: Sequence[ExpectKey] = ()
) -> Spec:
    """Validate already-loaded YAML ``data`` from ``path``; ``expect_keys``:
    the keys a variant's ``expect:`` may give (the registered experiments',
    runner.experiments.load_spec passes them)."""
    top = Where(path, "")
    data = expand_spec(data, path)  # a matrix of factors, written out as variants
    body = _mapping(data, top, TOP_REQUIRED, TOP_OPTIONAL)
    name = _name(body["name"], top.child("name"))
    seeds, seed_rounds = _seeds(body["seeds"], top.child("seeds"))
    dw = top.child("duration")
    dbody = _mapping(body["duration"], dw, ("bootstrap", "measure"), ("local_measure",))
    measure = _value(dbody["measure"], dw.child("measure"), Param("time", minimum=10))
    duration = Duration(
        bootstrap=_value(dbody["bootstrap"], dw.child("bootstrap"), Param("time", minimum=60)),
        measure=measure,
        local_measure=_value(
            dbody.get("local_measure", measure),
            dw.child("local_measure"),
            Param("time", minimum=10),
        ),
    )
    network = _network(body["network"], top.child("network"))
    workloads = _workloads(body["workloads"], top.child("workloads"))
    for group in network.clients:
        if group.workload not in workloads:
            raise top.child(f"network.clients.{group.name}.workload").error(
                f"no workload called {group.workload!r} (defined: {', '.join(workloads)})"
            )
    new_params = _new_params(body.get("new_consensus_params"), top.child("new_consensus_params"))
    variants = _variants(
        body["variants"],
        top.child("variants"),
        {g.name for g in network.clients},
        new_params,
        expect_keys,
        (network.topology, body["network"].get("topology", {}).get("params")),
    )
    check_references(list(variants), top.child("variants"))
    names = [v.name for v in variants]
    for v in variants:
        if v.cross_flows is not None and network.cross_traffic is None:
            raise top.child(f"variants.{v.name}.cross_flows").error(
                "the network has no cross_traffic for a variant to change"
            )
    baseline = body.get("baseline", names[0])
    if baseline not in names:
        raise top.child("baseline").error(f"expected one of the variants {names}, got {baseline!r}")
    cw = top.child("checks")
    cbody = _mapping(
        body.get("checks") or {},
        cw,
        (),
        (
            "min_completion",
            "min_transfers_per_size",
            "min_rounds_per_phase",
            "load",
            "load_variants",
            "keep_up",
        ),
    )
    classes = [g.name for g in network.clients if g.measured]
    checks = Checks(
        min_completion=_value(
            cbody.get("min_completion", 0.95),
            cw.child("min_completion"),
            Param("float", minimum=0.0, maximum=1.0),
        ),
        min_transfers_per_size=_value(
            cbody.get("min_transfers_per_size", 0),
            cw.child("min_transfers_per_size"),
            Param("int", minimum=0),
        ),
        min_rounds_per_phase=_value(
            cbody.get("min_rounds_per_phase", 0),
            cw.child("min_rounds_per_phase"),
            Param("int", minimum=0),
        ),
        load=_load_ranges(cbody.get("load"), cw.child("load")),
        load_variants=_load_variants(cbody.get("load_variants"), cw.child("load_variants"), names),
        keep_up=parse_keep_up(cbody.get("keep_up"), cw.child("keep_up"), names, classes),
    )
    comparisons = _comparisons(body.get("comparisons"), top.child("comparisons"), names, baseline)
    if any(v.client_relays for v in variants):
        classes.append(CLIENT_RELAY)
    hypotheses = parse_hypotheses(body.get("hypotheses"), top.child("hypotheses"), names, classes)
    _check_hypotheses_against_workloads(hypotheses, network, workloads, top.child("hypotheses"))
    claims = parse_ledger(body.get("claims"), top.child("claims"))
    check_ledger(
        claims,
        [
            (top.child("hypotheses").child(i).child("claim.id"), h.claim.id)
            for i, h in enumerate(hypotheses)
            if h.claim is not None
        ],
        top.child("claims"),
    )
    if seed_rounds is not None and not hypotheses:
        raise top.child("seeds").error(
            "seeds as {min, max, step} run until the hypotheses are decisive: state at "
            "least one under `hypotheses`, or give a list of seeds"
        )
    description = body.get("description", "")
    if not isinstance(description, str):
        raise top.child("description").error("expected a string")
    return Spec(
        name=name,
        description=description.strip(),
        path=path,
        sha256=sha256,
        seeds=tuple(seeds),
        baseline=baseline,
        duration=duration,
        network=network,
        workloads=workloads,
        variants=variants,
        checks=checks,
        comparisons=comparisons,
        hypotheses=hypotheses,
        seed_rounds=seed_rounds,
        raw=body,
        claims=claims,
    )


def _check_hypotheses_against_workloads(
    hypotheses: tuple[Hypothesis, ...],
    network: Network,
    workloads: dict[str, Workload],
    where: Where,
) -> None:
    """A hypothesis must ask about what some measured client's workload does:
    a size it transfers, a phase its rounds have, rounds at all."""
    for i, h in enumerate(hypotheses):
        at = where.child(i)
        groups = [g for g in network.clients if g.measured and h.cls in (None, g.name)]
        if h.cls == CLIENT_RELAY:
            continue  # client relays are clients of any class
        models = [workloads[g.workload] for g in groups]
        phases = [p for w in models for p in w.params.get("phases", ())]
        who = h.cls or "the measured clients"
        if h.metric == "round_completion" and not phases:
            kinds = sorted({w.model for w in models})
            raise at.child("metric").error(
                f"round_completion needs a rounds workload, and {who} run {', '.join(kinds)}"
            )
        if h.phase is not None and h.phase not in {p.name for p in phases}:
            known = sorted({p.name for p in phases})
            raise at.child("phase").error(
                f"no rounds workload of {who} has a phase {h.phase!r} (phases: {known})"
            )
        if h.size is not None and all(w.model != "markov" for w in models):
            sizes = {p.size for p in phases}
            for w in models:
                sizes |= set(w.params.get("sizes", ())) | (
                    {w.params["size"]} if "size" in w.params else set()
                )
            if h.size not in sizes:
                shown = ", ".join(human_size(x) for x in sorted(sizes)) or "none"
                raise at.child("size").error(
                    f"no workload of {who} transfers {human_size(h.size)} (sizes: {shown})"
                )


def load_spec(path: Path, expect_keys: Sequence[ExpectKey] = ()) -> Spec:
    """Read and validate the spec at ``path``; SpecError on any problem."""
    shown = str(path)
    if not path.is_file():
        raise SpecError(shown, "(file)", "no such spec file")
    text = path.read_bytes()
    if len(text) > MAX_SPEC_BYTES:
        raise SpecError(shown, "(file)", f"expected a spec of at most {MAX_SPEC_BYTES} bytes")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is not None and _expanded_size(node, {}) > MAX_SPEC_VALUES:
            raise SpecError(
                shown,
                "(file)",
                f"expected at most {MAX_SPEC_VALUES} values once YAML aliases are expanded "
                "(aliases nested in aliases multiply)",
            )
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(file)"
        raise SpecError(
            shown, where, f"expected valid YAML ({getattr(exc, 'problem', exc)})"
        ) from None
    return parse_spec(data, shown, content_sha256(data), expect_keys)


MAX_SPEC_BYTES = 1 << 20
# Far above any real spec (the largest here has a few thousand values), far
# below what a nest of aliases can make of a few lines.
MAX_SPEC_VALUES = 100_000


def _expanded_size(node: yaml.Node, seen: dict[int, int]) -> int:
    """How many values ``node`` stands for with every alias written out:
    counted once per node (aliases share their node), so never expanded."""
    if id(node) in seen:
        return seen[id(node)]
    seen[id(node)] = 1  # a node that contains itself counts once
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, seen) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, seen) + _expanded_size(v, seen) for k, v in node.value)
    seen[id(node)] = size
    return size


def content_sha256(data: Any) -> str:
    """A hash of what the spec says, not of its file's bytes: comments,
    spacing and key order change nothing."""
    text = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
