"""Experiment specs as plain data: the dataclasses a validated spec is made
of, and the names (roles, sections, checks' keys) the rest of the runner
reads them by.

Each field a YAML mapping gives is declared with ``yaml_key()``
(runner.spec.keys): the parsers (runner.spec.parse and the modules it calls)
take a mapping's allowed keys and its simple values from these dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runner.params import Param
from runner.spec.claims import ClaimsLedger
from runner.spec.hypotheses import Hypothesis
from runner.spec.keep_up import KeepUp
from runner.spec.keys import yaml_key
from runner.spec.measured import MeasuredParam

RELAY_ROLES = ("exitguard", "exit", "guard", "middle")
# A relay group is named by its role, or "any": relays sampled from a
# measured population take their roles from its flags.
ANY_ROLE = "any"
RELAY_GROUPS = (*RELAY_ROLES, ANY_ROLE)
# Roles a variant's torrc lines can target; client classes may be named too.
TORRC_ROLES = ("all", "authority", "relay", *RELAY_ROLES, "client")
# Debian's tor, `make tor`'s build (tor-patches/series), or `make tor-staged`'s
# (the series + tor-patches/staged/series: patches run before they join it).
TOR_BUILDS = ("stock", "patched", "staged")
# The group of clients that also run a relay (variants' client_relays).
CLIENT_RELAY = "client-relay"
# The positions a client relay can take (variants' client_relay_role).
CLIENT_RELAY_ROLES = ("middle", "guard", "exit")


@dataclass(frozen=True, kw_only=True)
class Topology:
    generator: str = yaml_key(required=True)
    params: dict[str, Any] = yaml_key()
    regions: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class RelayGroup:
    """Relays of one role: ``{count, bandwidth, regions, bandwidth_of}``, or
    drawn from a measured population, ``{count, sample, regions, countries,
    bandwidth_scale}`` (each form requires its own key)."""

    role: str  # one of RELAY_GROUPS
    count: int = yaml_key(required=True)
    # Bits/s, sampled log-uniformly in [low, high].
    bandwidth: tuple[int, int] = yaml_key(required=True)
    regions: tuple[str, ...] = yaml_key()
    # Relays of the group by name (relay8middle) whose bandwidth, in bits/s,
    # is the same in every seed; the others are drawn in the range.
    bandwidth_of: dict[str, int] = yaml_key(default_factory=dict)
    # Drawn from a measured population (runner.datasets) instead:
    # its name, which region each relay's country goes to ("*": every other
    # country), and a factor on the measured capacities.
    sample: str | None = yaml_key(required=True, default=None)
    countries: dict[str, str] = yaml_key(default_factory=dict)
    bandwidth_scale: float = yaml_key(Param("float", default=1.0, minimum=0.001, maximum=1000.0))


def relay_name(role: str, number: int) -> str:
    """The name of a network's ``number``-th relay (from 1, over its groups
    in the order of RELAY_GROUPS), of ``role``."""
    return f"relay{number}{role}"


# The fields of each form of a relay group that the other form leaves out.
SAMPLED_ONLY = ("sample", "countries", "bandwidth_scale")
RANGE_ONLY = ("bandwidth", "bandwidth_of")


@dataclass(frozen=True, kw_only=True)
class LinkClass:
    """A kind of access link (residential, institutional, ...): the share of
    a client group that has it and its speeds, sampled log-uniformly in the
    ranges. One draw places a client in both ranges, so a faster downlink
    goes with a faster uplink; without an uplink range the link is symmetric.

    Or, with ``speeds`` (a data set of runner.datasets), each client
    draws a country from ``countries`` (code, share) and gets that country's
    measured mean download and upload speeds."""

    name: str
    share: float = yaml_key(Param("float", minimum=0.0, required=True))
    down: tuple[int, int] = yaml_key(name="bandwidth", required=True)  # bits/s
    up: tuple[int, int] | None = yaml_key(name="bandwidth_up")
    speeds: str | None = yaml_key(required=True, default=None)
    countries: tuple[tuple[str, float], ...] = yaml_key(required=True, default=())


# The fields of a measured link class, and those of one given by its ranges.
MEASURED_LINK_ONLY = ("speeds", "countries")
RANGE_LINK_ONLY = ("down", "up")


@dataclass(frozen=True, kw_only=True)
class ClientGroup:
    name: str  # the class: perf, web, bulk, ...
    # 0: a class the network leaves out, whose clients only the variants
    # that add them (``add_clients``) have.
    count: int = yaml_key(Param("int", minimum=0, required=True))
    workload: str = yaml_key(required=True)
    bandwidth_down: int = yaml_key(name="bandwidth")
    regions: tuple[str, ...] = yaml_key()
    measured: bool = yaml_key(Param("bool", default=True))
    bandwidth_up: int = yaml_key()
    links: tuple[LinkClass, ...] = yaml_key(default=())  # if given, these set the bandwidths


@dataclass(frozen=True, kw_only=True)
class ServerGroup:
    count: int = yaml_key(Param("int", minimum=1, required=True))
    bandwidth: int = yaml_key(Param("bandwidth", minimum=8000, required=True))
    regions: tuple[str, ...] = yaml_key()
    port: int = yaml_key(Param("int", default=80, minimum=1, maximum=65535))


@dataclass(frozen=True, kw_only=True)
class CrossTraffic:
    """Competing flows that are not Tor's: on every relay of ``roles``, a
    tgen process keeps ``flows`` bulk TCP transfers of ``size`` going, back
    to back, directly with the servers. They run on the relay's own host,
    so they share its access link with its Tor connections: Shadow gives
    links to hosts, not to the graph's edges, so a host beside the relay
    could not share its bottleneck."""

    roles: tuple[str, ...] = yaml_key(name="relays", required=True)
    flows: int = yaml_key(Param("int", minimum=1, maximum=64, required=True))
    size: int = yaml_key(Param("size", default="5 MiB", minimum=1))  # bytes per transfer
    direction: str = yaml_key()  # down (server to relay host), up, or both (half each)


CROSS_DIRECTIONS = ("down", "up", "both")


@dataclass(frozen=True, kw_only=True)
class CircuitSample:
    """Circuits drawn per seed from a file of measured paths (nstor's
    circuits format: an index, then per hop a fingerprint, a region and a
    rate in bytes/s), each measured client held to one of them
    (runner.network.circuits). The network's relays are the distinct relays
    of the circuits drawn, each at its file rate x ``count`` /
    ``paper_circuits``, so that each carries the load it carried among
    ``paper_circuits`` circuits."""

    # Relative to the data folder ($TORNET_DATA, else ../shared/data), or absolute.
    file: str = yaml_key(Param("str", required=True))
    sha256: str = yaml_key(Param("str", required=True))
    count: int = yaml_key(Param("int", minimum=1, maximum=10000, required=True))
    paper_circuits: int = yaml_key(Param("int", minimum=1, maximum=100000, required=True))
    # The first ceil(bulk_share x count) circuits drawn, in the file's order, are bulk.
    bulk_share: float = yaml_key(Param("float", default=0.1, minimum=0.0, maximum=1.0))
    # The file's region of each relay (two capital letters, "*": every other) to a region.
    regions: dict[str, str] = yaml_key(required=True)
    # The client classes whose i-th client takes the i-th bulk (web) circuit.
    bulk: tuple[str, ...] = yaml_key(required=True)
    web: tuple[str, ...] = yaml_key(required=True)
    # Each measured client's first transfer starts this far into the
    # measurement, drawn uniformly per seed and client (seconds).
    start_within: tuple[float, float] = yaml_key(default=(0.0, 0.0))


@dataclass(frozen=True, kw_only=True)
class Network:
    topology: Topology = yaml_key(required=True)
    authorities: int = yaml_key(Param("int", default=1, minimum=1, maximum=9))
    # Required unless ``circuits`` gives the relays.
    relays: tuple[RelayGroup, ...] = yaml_key()
    clients: tuple[ClientGroup, ...] = yaml_key(required=True)
    servers: ServerGroup = yaml_key(required=True)
    cross_traffic: CrossTraffic | None = yaml_key(default=None)
    circuits: CircuitSample | None = yaml_key(default=None)


@dataclass(frozen=True, kw_only=True)
class Workload:
    name: str
    model: str = yaml_key(required=True)
    params: dict[str, Any] = yaml_key()


@dataclass(frozen=True, kw_only=True)
class Variant:
    name: str
    tor: str = yaml_key()  # one of TOR_BUILDS
    torrc: dict[str, tuple[str, ...]] = yaml_key()
    consensus: dict[str, int] = yaml_key()
    description: str = yaml_key(default="")
    # What the experiments' checks expect of the variant's runs, by the keys
    # the registered experiments declare (runner.spec.expect).
    expect: dict[str, int] = yaml_key(default_factory=dict)
    # Mixed networks: a torrc section's lines go to this share of the hosts
    # it names (chosen per seed, the same for every variant).
    fractions: dict[str, float] = yaml_key(default_factory=dict)
    # Share of each client class whose clients also run a relay.
    client_relays: dict[str, float] = yaml_key(default_factory=dict)
    # Growth: this share more clients of each class, on the same relays.
    extra_clients: float = yaml_key(Param("float", default=0.0, minimum=0.0, maximum=10.0))
    # At most this many clients of each class named (the first ones): a
    # variant can leave out clients the network has, keeping the rest as
    # they are.
    clients: dict[str, int] = yaml_key(default_factory=dict)
    # This many clients of each class named added to the seed's network,
    # drawn apart so that the network they join is unchanged (as growth's
    # are): a class the network has none of (count 0) in one variant.
    add_clients: dict[str, int] = yaml_key(default_factory=dict)
    # Cross-traffic flows per relay in this variant, instead of the
    # network's count (0: none); None keeps the network's.
    cross_flows: int | None = yaml_key(default=None)
    # Torrc lines that open the network beyond its own hosts (an exit policy
    # accepting every address, a SOCKS or control port on another address)
    # are meant: the local backend runs them (runner.network.exposure).
    opens_network: bool = yaml_key(Param("bool", default=False))
    # The position client relays take in the consensus: middle, guard or
    # exit (an exit's policy reaches only the experiment's servers).
    client_relay_role: str = yaml_key(Param("str", default="middle", choices=CLIENT_RELAY_ROLES))
    # Consensus parameters set per seed from what another variant's clients
    # got on that seed (runner.spec.measured).
    consensus_from: dict[str, MeasuredParam] = yaml_key(default_factory=dict)
    # The topology the variant runs on, when its ``topology:`` changes the
    # network's parameters (loss on a link as a factor); None: the network's.
    topology: Topology | None = yaml_key(default=None)
    # Each measured client held to the first this many guards and middles
    # (and the first exit) of one draw per seed and client, the same in
    # every variant (runner.network.pinned_paths); 0: tor draws its paths.
    pinned_path: int = yaml_key(Param("int", default=0, minimum=0, maximum=8))
    # Rate of each cross-traffic flow (bits per second) in this variant: a
    # flow paced by a packet model instead of a greedy TCP transfer; None:
    # greedy.
    cross_rate: float | None = yaml_key(Param("bandwidth", minimum=8000), default=None)
    # How fast this variant's rounds are expected to run, as a share of the
    # rounds workload's ``rate`` (a matrix multiplies its levels' paces):
    # with ``cycles`` its simulated time follows (runner.spec.pace); None: 1.
    pace: float | None = yaml_key(Param("float", minimum=0.001, maximum=1000.0), default=None)
    # The variant's level of each factor, when it comes from a matrix
    # (runner.spec.matrix writes them).
    factors: dict[str, str] = yaml_key(default_factory=dict)

    def client_torrc(self, cls: str) -> tuple[str, ...]:
        """The lines a client of class ``cls`` (one that runs no relay) gets,
        in its torrc's order."""
        return tuple(line for part in client_sections(cls) for line in self.torrc.get(part, ()))


# Fields added after runs and snapshots were made: left out of a run's
# identity and a spec's canonical form while empty, so that specs that do
# not give them keep both (runner.network.identity, runner.spec.canonical).
LEFT_OUT_WHILE_EMPTY: dict[type, tuple[str, ...]] = {
    Variant: ("pinned_path", "cross_rate", "pace", "add_clients"),
    Network: ("circuits",),
    Hypothesis: ("same_clients",),
    ClaimsLedger: ("conditions",),
}


def left_out_while_empty(
    value: Any, name: str, also: dict[type, tuple[str, ...]] | None = None
) -> bool:
    """Whether field ``name`` of ``value`` is one added later (LEFT_OUT_WHILE_EMPTY,
    or ``also``: a caller's own older additions) and left empty."""
    added = LEFT_OUT_WHILE_EMPTY.get(type(value), ()) + (also or {}).get(type(value), ())
    return name in added and not getattr(value, name)


def client_sections(cls: str) -> list[str]:
    """The torrc sections a client of class ``cls`` that runs no relay
    reads, in order: all, client, then its class."""
    return ["all", "client", cls]


def client_relay_load_role(position: str) -> str:
    """The role client relays in ``position`` are counted under in the load
    table (relay_load.csv)."""
    return f"{CLIENT_RELAY}-{position}"


# Every role the load table can name, in the order reports list them.
LOAD_ROLES = (*RELAY_ROLES, *(client_relay_load_role(p) for p in CLIENT_RELAY_ROLES))


# What the rounds after the first run (seeds: {later: ...}): every variant,
# or only the variants that the hypotheses still undetermined compare; with
# "family" the first round too runs only the variants the confirmatory
# family compares (the other variants' tables come from other seeds).
LATER_ROUNDS = ("all", "hypotheses", "family")
# Seeds of the first round unless the spec says otherwise: under five, a
# verdict rests on the seeds' spread being normal (runner/analyses/answers.py).
DEFAULT_FIRST_SEEDS = 5
# The fewest seeds a confirmatory look decides at: the seeds before it
# estimate the spread (a look at 5 seeds asks a change to sit tens of its
# standard deviations from zero under the skew allowance, and decides nothing).
DEFAULT_DECIDE_FROM = 7
# The skewness of seeds' log ratios the rule's allowance is calibrated for
# where the spec states none (runner/analyses/sequential.py).
DEFAULT_SKEW = 1.0


@dataclass(frozen=True, kw_only=True)
class SeedRounds:
    """``seeds: {min, max, step, later}``: run ``min`` seeds (default 5), then
    ``step`` (default 2) more at a time until every hypothesis is decisive
    or ``max`` seeds have run. With ``later: hypotheses`` the first round
    runs every variant (the report's tables) and the later ones only what
    the undetermined hypotheses need; with ``later: family`` every round
    runs only what the confirmatory family needs."""

    min: int = yaml_key(Param("int", default=DEFAULT_FIRST_SEEDS, minimum=2))
    max: int = yaml_key(required=True)  # at least min
    step: int = yaml_key(Param("int", default=2, minimum=1))
    later: str = yaml_key(default="all")  # one of LATER_ROUNDS
    # The first seed's number: a design run on seeds no earlier run used
    # starts past them (seeds first..first + min - 1, then on).
    first: int = yaml_key(Param("int", default=1, minimum=0))
    # Looks before this many seeds decide nothing (their seeds estimate the spread).
    decide_from: int = yaml_key(Param("int", default=DEFAULT_DECIDE_FROM, minimum=3))
    # The skewness of seeds' log ratios the boundaries allow for: the pilot's,
    # or DEFAULT_SKEW where there is none.
    skew: float = yaml_key(Param("float", default=DEFAULT_SKEW, minimum=0.0, maximum=3.0))


@dataclass(frozen=True, kw_only=True)
class Duration:
    # Seconds of simulated time before traffic starts.
    bootstrap: float = yaml_key(Param("time", minimum=60, required=True))
    measure: float = yaml_key(Param("time", minimum=10, required=True))  # seconds of traffic
    # Seconds of traffic on the local backend, which runs in real time (its
    # bootstrap lasts as long as the network takes); the spec's default: measure.
    local_measure: float = yaml_key(Param("time", minimum=10), default=0.0)


ALL_RELAYS = "relays"  # checks.load's key for every relay
BUSIEST = "busiest "  # checks.load's prefix for the busiest relay of a role


@dataclass(frozen=True, kw_only=True)
class Checks:
    # Per measured client and run.
    min_completion: float = yaml_key(Param("float", default=0.95, minimum=0.0, maximum=1.0))
    # Completed, per measured client, run and size.
    min_transfers_per_size: int = yaml_key(Param("int", default=0, minimum=0))
    # Complete rounds of each phase, per measured client and run (the
    # rounds workload): fewer cannot say how long a round takes.
    min_rounds_per_phase: int = yaml_key(Param("int", default=0, minimum=0))
    # Relay role (or "relays": all) -> the range its relays' mean utilisation
    # over the measured period must be in, per run (the load check).
    load: dict[str, tuple[float, float]] = yaml_key(default_factory=dict)
    # The variants the load check holds for (empty: every variant). A
    # mechanism that throttles traffic lowers the load by its own effect;
    # the network's calibration is checked under the references.
    load_variants: tuple[str, ...] = yaml_key(default=())
    # Variants that must keep up with a reference run on the same seed
    # (runner.spec.keep_up): a mechanism must not starve the path.
    keep_up: tuple[KeepUp, ...] = yaml_key(default=())


# A top-level key that fills no field: consensus parameters the variants
# may set before tor-patches/consensus-params.txt lists them.
NEW_CONSENSUS_PARAMS = "new_consensus_params"


@dataclass(frozen=True, kw_only=True)
class Spec:
    name: str = yaml_key(required=True)
    description: str = yaml_key()
    path: str
    sha256: str
    # With seed_rounds, the first round's: 1..min.
    seeds: tuple[int, ...] = yaml_key(required=True)
    baseline: str = yaml_key()
    duration: Duration = yaml_key(required=True)
    network: Network = yaml_key(required=True)
    workloads: dict[str, Workload] = yaml_key(required=True)
    variants: tuple[Variant, ...] = yaml_key(required=True)
    checks: Checks = yaml_key()
    comparisons: tuple[tuple[str, str], ...] = yaml_key(default=())  # (variant, reference) pairs
    hypotheses: tuple[Hypothesis, ...] = yaml_key(default=())
    seed_rounds: SeedRounds | None = None  # from ``seeds:`` as a mapping
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)
    # The seeds of the variants that run at fewer than ``seeds`` (seed rounds
    # with ``later: hypotheses``); ``seeds`` is then every seed any variant ran.
    variant_seeds: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # The published claims the hypotheses test and those the spec cannot
    # (runner.spec.claims); None if it names none.
    claims: ClaimsLedger | None = yaml_key(default=None)
    # Seconds of traffic of the variants whose clients end after their
    # cycles (runner.spec.pace), by name; the others measure ``duration.measure``.
    variant_measure: dict[str, float] = field(default_factory=dict)

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

    def measure_of(self, variant: str) -> float:
        """Seconds of traffic ``variant`` simulates."""
        return self.variant_measure.get(variant, self.duration.measure)

    def mean_measure(self) -> float:
        """The mean over the variants of their seconds of traffic."""
        return sum(self.measure_of(v.name) for v in self.variants) / max(len(self.variants), 1)

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
