"""What an answer will cost: from a pilot's runs, per hypothesis, the change,
the spread between seeds and its parts, and the seeds and CPU-hours a
decisive verdict needs, for the current design and for alternatives.

The spread of a seed's log ratio (variant over reference) has parts:

- between a client's transfers (fewer transfers per client, as in a shorter
  measurement, raise it): the variance of the seed's statistic when each
  client's transfers are resampled;
- between measured clients (each draws its own path; more measured clients
  average it): the variance when the clients are resampled (made unbiased:
  the bootstrap's is (n - 1) / n of it), less the transfers' part it
  includes;
- between seeds beyond those (the network's own draw: relays' bandwidths,
  places, latencies): what is left of the spread seen between the seeds.
  Only more seeds average it, or, as assumed here and not measured, more
  relays per network (each network then a larger sample of the same
  ranges).

Both resamplings are bootstraps within each seed, summed over the two
sides of the ratio (variant and reference, or a contrast's two client
groups) and averaged over seeds; every metric keeps its values per client
(answers.per_seed_samples), so each has both parts. With one measured
client per seed the client part cannot be told from the seeds' and stays
in the latter (more clients are then predicted to help not at all, the
cautious guess).

The cost of a run is fitted on the pilot's runs as a fixed part (the
network's bootstrap and idle traffic, growing with relays and with the
simulated time) plus a part that grows with the payload the measured
clients moved (which grows with their number, and with the measurement
time), from the CPU seconds each run recorded (runner/manifest.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from runner.analyses.answers import (
    first_step_alpha,
    hypothesis_rounds,
    per_seed_samples,
    seed_change,
    seed_samples,
)
from runner.analyses.client_bandwidth import ClientBandwidth
from runner.analyses.plan_load import (
    busiest_by_role,
    busiest_utilisation,
    class_demand,
    role_capacity,
)
from runner.analyses.power import MAX_SEEDS, Target, seeds_to_decisive, simulate_rounds
from runner.analyses.rounds import Round
from runner.analyses.seed_rounds import variants_compared
from runner.analyses.sequential import ALPHA, SequentialDesign
from runner.analyses.stats import ClientValues, resample_clients, resample_within
from runner.layout import Layout
from runner.manifest import (
    STATUS_COMPLETE,
    read_manifest,
    run_cpu_seconds,
    run_status,
)
from runner.spec.hypotheses import Hypothesis
from runner.spec.model import Spec
from runner.tables.schema import RelayLoad, TransferRow

PROBABILITY = 0.8
LOADED = 0.5  # a busiest relay busier than this on average: the network is loaded
_BOOTSTRAP = 300


@dataclass(frozen=True)
class Spread:
    """One hypothesis's change and the parts of its spread between seeds
    (variances of the per-seed log ratio)."""

    hypothesis: str
    seeds: int
    effect: float  # the mean log ratio
    total: float
    transfers: float | None  # between a client's transfers; None if not measurable
    clients: float | None  # between measured clients; None with one client a seed
    between: float  # between seeds beyond both

    def predicted(self, clients: float, relays: float, measure: float) -> float:
        """The variance with ``clients`` times the measured clients,
        ``relays`` times the relays and ``measure`` times the measurement."""
        per_transfer = (self.transfers or 0.0) / (clients * measure)
        per_client = (self.clients or 0.0) / clients
        return self.between / relays + per_client + per_transfer


def _log_var(draws: Iterable[float]) -> float:
    logs = [math.log(d) for d in draws if d > 0 and math.isfinite(d)]
    return float(np.var(logs, ddof=1)) if len(logs) > 1 else 0.0


def client_variance(side: ClientValues, statistic: Any, rng: np.random.Generator) -> float:
    """The variance of the log of a seed's statistic between its measured
    clients (their transfers' noise included): the bootstrap variance when
    the clients are resampled, times n / (n - 1) for n clients, since the
    bootstrap's is that much too small (half with two clients)."""
    n = len(side)
    boot = _log_var(statistic(resample_clients(side, rng)) for _ in range(_BOOTSTRAP))
    return boot * n / (n - 1)


def transfer_variance(side: ClientValues, statistic: Any, rng: np.random.Generator) -> float:
    """The variance of the log of a seed's statistic between each client's
    own transfers: the bootstrap variance when each client's values are
    resampled, the clients kept."""
    return _log_var(statistic(resample_within(side, rng)) for _ in range(_BOOTSTRAP))


def spread(
    h: Hypothesis,
    transfers: Sequence[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round] = (),
) -> Spread | None:
    """The parts of one hypothesis's spread; None under two paired seeds.
    The client part is the clients' own (what resampling the clients adds
    beyond their transfers' noise), so that more clients and a longer
    measurement are each credited once. An interaction's spread is its
    seeds' spread alone (no part is split off for clients or transfers)."""
    samples, statistic = per_seed_samples(h, transfers, bandwidths, rounds)
    seeds = seed_samples(h, samples)
    if h.interaction is not None:
        logs_ = [math.log(r) for r in seed_change(h, seeds, statistic).ratios]
        if len(logs_) < 2:
            return None
        var = float(np.var(logs_, ddof=1))
        return Spread(h.name, len(logs_), float(np.mean(logs_)), var, None, None, var)
    rng = np.random.default_rng(0)
    logs, client_parts, transfer_parts = [], [], []
    for values, reference in seeds:
        if not values or not reference:
            continue
        top, bottom = statistic(values), statistic(reference)
        if not (top > 0 and bottom > 0):
            continue
        logs.append(math.log(top / bottom))
        within = sum(transfer_variance(side, statistic, rng) for side in (values, reference))
        transfer_parts.append(within)
        if min(len(values), len(reference)) > 1:
            between = sum(client_variance(side, statistic, rng) for side in (values, reference))
            client_parts.append(max(between - within, 0.0))
    if len(logs) < 2:
        return None
    total = float(np.var(logs, ddof=1))
    transfer_part = float(np.mean(transfer_parts))
    client_part = float(np.mean(client_parts)) if client_parts else None
    between = max(total - transfer_part - (client_part or 0.0), 0.0)
    return Spread(
        h.name, len(logs), float(np.mean(logs)), total, transfer_part, client_part, between
    )


@dataclass(frozen=True)
class RunCost:
    """One pilot run: its CPU seconds and the payload its measured clients moved."""

    variant: str
    seed: int
    cpu_s: float
    wall_s: float
    measured_bytes: float


@dataclass(frozen=True)
class CostModel:
    fixed_cpu_s: float  # per run, at the pilot's relays and simulated time
    cpu_s_per_byte: float  # per byte the measured clients moved
    bytes_per_run: float  # the pilot's mean
    wall_per_cpu: float  # a run's wall time over its CPU time
    runs: int
    fitted: bool  # False: too few runs or no slope; the split is by host counts

    def run_cpu_s(self, clients: float, relays: float, measure: float, share: float) -> float:
        """A run's CPU seconds with the factors of ``Spread.predicted``;
        ``share``: the simulated time the measurement is of the pilot's."""
        traffic = self.cpu_s_per_byte * self.bytes_per_run * clients * measure
        fixed = self.fixed_cpu_s * relays * share
        return fixed + traffic


def cost_model(runs: Sequence[RunCost], client_share_of_hosts: float) -> CostModel | None:
    if not runs:
        return None
    cpu = np.array([r.cpu_s for r in runs])
    moved = np.array([r.measured_bytes for r in runs])
    wall_per_cpu = float(np.mean([r.wall_s / r.cpu_s for r in runs if r.cpu_s > 0]) or 1.0)
    if len(runs) >= 3 and float(np.std(moved)) > 0:
        slope, intercept = np.polyfit(moved, cpu, 1)
        if slope > 0 and intercept > 0:
            return CostModel(
                float(intercept), float(slope), float(moved.mean()), wall_per_cpu, len(runs), True
            )
    # No usable fit: split the mean by host counts (measured clients' share).
    mean = float(cpu.mean())
    per_byte = mean * client_share_of_hosts / float(moved.mean()) if moved.mean() > 0 else 0.0
    return CostModel(
        mean * (1 - client_share_of_hosts),
        per_byte,
        float(moved.mean()),
        wall_per_cpu,
        len(runs),
        False,
    )


def farthest_off(model: CostModel, runs: Sequence[RunCost]) -> float | None:
    """How far the pilot's runs came from ``model``'s figure for each (its
    fixed part plus its part for the bytes the run moved): the largest
    difference as a fraction of the figure; None under two runs."""
    if len(runs) < 2:
        return None
    off = 0.0
    for r in runs:
        figure = model.fixed_cpu_s + model.cpu_s_per_byte * r.measured_bytes
        if figure > 0:
            off = max(off, abs(r.cpu_s - figure) / figure)
    return off


@dataclass(frozen=True)
class PilotConditions:
    """What the pilot's CPU figures were measured under, as its runs'
    manifests record it."""

    runs: int  # complete runs that recorded their CPU time
    # Runs at once beside each run (the pool's size), distinct values; empty
    # where the manifests predate that record.
    at_once: tuple[int, ...]
    machine_cpus: tuple[int, ...]  # the CPUs those runs shared, distinct values
    machines: int  # distinct nodes the runs ran on; 0: not recorded
    farthest_off: float | None  # farthest_off of the cost model; None under 2 runs


def pilot_conditions(
    placements: Sequence[dict[str, Any]], model: CostModel | None, runs: Sequence[RunCost]
) -> PilotConditions:
    """From the ``placement`` of each pilot run that recorded its CPU time."""

    def distinct(key: str) -> tuple[int, ...]:
        return tuple(sorted({int(p[key]) for p in placements if p.get(key)}))

    return PilotConditions(
        len(runs),
        distinct("jobs"),
        distinct("machine_cpus"),
        len({p["node"] for p in placements if p.get("node")}),
        farthest_off(model, runs) if model is not None else None,
    )


@dataclass(frozen=True)
class Alternative:
    name: str
    clients: float = 1.0  # times the measured clients per network
    relays: float = 1.0  # times the relays
    measure: float = 1.0  # times the measurement time
    bootstrap: float = 1.0  # times the simulated time before the measurement
    # Times the capacity of the relays in a role, where it differs from
    # ``relays`` (a larger design's relays may be faster as well as more).
    capacity: tuple[tuple[str, float], ...] = ()

    def capacity_of(self, role: str) -> float:
        """Times the capacity of the relays in ``role``."""
        return dict(self.capacity).get(role, self.relays)

    def on(self, base: Alternative) -> Alternative:
        """This change applied to a design that is already ``base``."""
        roles = sorted({r for r, _ in self.capacity} | {r for r, _ in base.capacity})
        return Alternative(
            self.name,
            self.clients * base.clients,
            self.relays * base.relays,
            self.measure * base.measure,
            self.bootstrap * base.bootstrap,
            tuple((r, self.capacity_of(r) * base.capacity_of(r)) for r in roles),
        )


ALTERNATIVES = (
    Alternative("as configured"),
    Alternative("2x measured clients", clients=2),
    Alternative("4x measured clients", clients=4),
    Alternative("2x relays", relays=2),
    Alternative("half the measurement", measure=0.5),
)
# With several measured clients a network, fewer may be cheaper: a run costs
# less, and the seeds' spread grows only by the clients' part.
FEWER_CLIENTS = (
    Alternative("half the measured clients", clients=0.5),
    Alternative("half the measured clients and measurement", clients=0.5, measure=0.5),
)


def alternatives_for(measured_clients: int) -> tuple[Alternative, ...]:
    """The designs to price: halving the measured clients needs two or more
    (and leaves at least one)."""
    return ALTERNATIVES + (FEWER_CLIENTS if measured_clients >= 2 else ())


@dataclass(frozen=True)
class Prediction:
    alternative: Alternative
    fixed_seeds: dict[str, int]  # hypothesis -> seeds a fixed-size design needs (80%)
    rule_max: int  # the `max` of seeds {min: 5, step: 2} deciding every hypothesis (80% each)
    expected_seeds: float  # seeds the rule is expected to run
    cpu_s_per_seed: float  # every variant once
    cpu_hours_expected: float
    cpu_hours_max: float
    busiest: float | None  # the busiest relay's predicted mean utilisation
    loads: bool  # the measured clients would load the network
    wall_per_cpu: float = 1.0  # a run's wall time over its CPU time
    # Variants the rounds after the first run (seeds: {later: hypotheses});
    # None: every variant.
    later_variants: int | None = None

    def wall_hours(self, cores: int, variants: int, seeds: float) -> float:
        """Wall hours on ``cores`` cores, one run per core at a time."""
        per_run = self.cpu_s_per_seed / variants * self.wall_per_cpu
        runs = rule_runs(variants, seeds, self.later_variants)
        return math.ceil(runs / cores) * per_run / 3600


def rule_runs(variants: int, seeds: float, later_variants: int | None) -> float:
    """Runs of a rule that reaches ``seeds`` seeds: every variant at the
    first round's seeds, then ``later_variants`` (if not all) at the others."""
    if later_variants is None or seeds <= FIRST_ROUND:
        return variants * seeds
    return variants * FIRST_ROUND + later_variants * (seeds - FIRST_ROUND)


SIMULATED_UP_TO = 41  # rules with more seeds than this are approximated, not simulated
# Beyond that, an O'Brien-Fleming rule with looks every 2 seeds needs about
# 10% more seeds at its last look than a fixed-size interval ((2.04 / 1.96)^2
# with many looks) and, with a true change, stops on average near the
# fixed size.
LAST_LOOK_INFLATION = 1.1


# The first round of the rules the plan simulates: seeds {min: 5, step: 2}.
FIRST_ROUND = 5


def rule_max_seeds(
    effect: float,
    variance: float,
    target: Target,
    first: int = FIRST_ROUND,
    alpha: float = ALPHA,
) -> tuple[int, float]:
    """The smallest ``max`` of seeds {min: first, step: 2} whose rule at
    level ``alpha`` decides with PROBABILITY, and the seeds it is expected
    to run; (MAX_SEEDS + 1, nan) if none up to MAX_SEEDS does."""
    sd = math.sqrt(variance)
    fixed = seeds_to_decisive(effect, sd, target, PROBABILITY, alpha)
    if fixed > MAX_SEEDS:
        return MAX_SEEDS + 1, math.nan
    high = max(first, fixed)
    while high <= SIMULATED_UP_TO:
        outcome = simulate_rounds(
            effect, sd, SequentialDesign.from_rounds(first, high, 2), [target], alpha
        )
        if outcome.decisive >= PROBABILITY:
            return high, outcome.expected_seeds
        high += 2
    most = max(high, math.ceil(fixed * LAST_LOOK_INFLATION))
    return (most, float(fixed)) if most <= MAX_SEEDS else (MAX_SEEDS + 1, math.nan)


def predict(
    spreads: dict[str, Spread],
    hypotheses: Sequence[Hypothesis],
    cost: CostModel | None,
    variants: int,
    measure_share: float,
    busiest: dict[str, float],
    measured_share: float,
    alternatives: Sequence[Alternative] = ALTERNATIVES,
    base: Alternative = Alternative("pilot"),
    later_variants: int | None = None,
    base_demand: float | None = None,
) -> list[Prediction]:
    """``measure_share``: the measurement's share of the simulated time;
    ``busiest``: per relay role, the pilot's busiest relay's utilisation;
    ``measured_share``: the measured clients' share of the network's
    traffic (their load grows with their number); ``base``: how the design
    planned for differs from the pilot's (the alternatives apply on top);
    ``later_variants``: the variants rounds after the first run, if not all;
    ``base_demand``: times the pilot's traffic that ``base``'s clients offer
    (by default, as its measured clients grow)."""
    found = []
    for named in alternatives:
        alt = named.on(base)
        fixed: dict[str, int] = {}
        worst_max, worst_expected = 0, 0.0
        for h in hypotheses:
            s = spreads.get(h.name)
            if s is None:
                continue
            variance = s.predicted(alt.clients, alt.relays, alt.measure)
            target = Target(h.direction, h.smallest_change)
            alpha = first_step_alpha(h, hypotheses)
            sd = math.sqrt(variance)
            fixed[h.name] = seeds_to_decisive(s.effect, sd, target, PROBABILITY, alpha)
            most, expected = rule_max_seeds(s.effect, variance, target, alpha=alpha)
            worst_max = max(worst_max, most)
            worst_expected = max(worst_expected, expected if math.isfinite(expected) else math.inf)
        share = (1 - measure_share) * alt.bootstrap + measure_share * alt.measure
        per_run = cost.run_cpu_s(alt.clients, alt.relays, alt.measure, share) if cost else math.nan
        per_seed = per_run * variants
        # The measured clients' share of the load grows with their number;
        # each role's relays carry it at their capacity.
        if base_demand is None:
            demand = 1 - measured_share + measured_share * alt.clients
        else:
            demand = base_demand * (1 - measured_share + measured_share * named.clients)
        loaded = (
            max(value * demand / alt.capacity_of(role) for role, value in busiest.items())
            if busiest
            else None
        )
        found.append(
            Prediction(
                named,
                fixed,
                worst_max,
                worst_expected,
                per_seed,
                per_run * rule_runs(variants, worst_expected, later_variants) / 3600
                if math.isfinite(worst_expected)
                else math.inf,
                per_run * rule_runs(variants, worst_max, later_variants) / 3600
                if worst_max <= MAX_SEEDS
                else math.inf,
                loaded,
                loaded is not None and loaded > LOADED,
                cost.wall_per_cpu if cost else 1.0,
                later_variants,
            )
        )
    return found


def cheapest(predictions: Sequence[Prediction]) -> Prediction | None:
    """The alternative deciding every hypothesis at the least expected
    CPU-hours, among those that keep the network's load as it is."""
    fits = [p for p in predictions if not p.loads and math.isfinite(p.cpu_hours_expected)]
    return min(fits, key=lambda p: p.cpu_hours_expected) if fits else None


@dataclass(frozen=True)
class Plan:
    seeds: tuple[int, ...]  # the pilot's
    variants: int
    measured_clients: int  # per network
    relays: int
    spreads: dict[str, Spread]
    cost: CostModel | None
    busiest: float | None
    busiest_roles: dict[str, float]  # per relay position, its busiest relay's
    predictions: list[Prediction]
    hypotheses: tuple[Hypothesis, ...]
    pilot: str  # the experiment whose runs the plan comes from
    base: Alternative  # how the design planned for differs from the pilot's
    conditions: PilotConditions | None = None  # what the cost was measured under

    @property
    def best(self) -> Prediction | None:
        return cheapest(self.predictions)


def _hosts(manifest: dict[str, Any]) -> tuple[int, int, int, int]:
    """(measured clients, clients, relays, all hosts) of a run."""
    hosts = manifest.get("hosts", {}).values()
    measured = sum(1 for h in hosts if h.get("measured"))
    clients = sum(1 for h in hosts if h.get("role") == "client")
    relays = sum(1 for h in hosts if h.get("role") in ("guard", "middle", "exit"))
    return measured, clients, relays, len(hosts)


def design_size(spec: Spec) -> tuple[int, int]:
    """(measured clients, relays) of one of ``spec``'s networks."""
    measured = sum(g.count for g in spec.network.clients if g.measured)
    return measured, sum(g.count for g in spec.network.relays)


def scaling(pilot: Spec, target: Spec) -> Alternative:
    """How ``target``'s design differs from ``pilot``'s, as factors."""
    (pilot_clients, pilot_relays), (clients, relays) = design_size(pilot), design_size(target)
    pilot_capacity, capacity = role_capacity(pilot), role_capacity(target)
    return Alternative(
        f"{target.name} from {pilot.name}'s pilot",
        clients / max(pilot_clients, 1),
        relays / max(pilot_relays, 1),
        target.duration.measure / pilot.duration.measure,
        target.duration.bootstrap / pilot.duration.bootstrap,
        tuple(
            (role, capacity[role] / pilot_capacity[role])
            for role in sorted(capacity)
            if pilot_capacity.get(role)
        ),
    )


def later_variants(spec: Spec) -> int | None:
    """The variants ``spec``'s later seed rounds run, if not all."""
    if spec.seed_rounds is None or spec.seed_rounds.later != "hypotheses":
        return None
    return len(variants_compared(spec, spec.hypotheses))


def pilot_hypotheses(pilot: Spec, planned: Spec) -> tuple[Hypothesis, ...]:
    """The hypotheses whose spread the pilot measures: each of ``planned``'s
    whose variant and reference the pilot ran, else the pilot's own of the
    same name (a larger design may name its variants otherwise)."""
    ran = {v.name for v in pilot.variants}
    own = {h.name: h for h in pilot.hypotheses}
    chosen = []
    for h in planned.hypotheses:
        if set(h.variants) <= ran:
            chosen.append(h)
        elif h.name in own:
            chosen.append(own[h.name])
    return tuple(chosen)


def make_plan(
    spec: Spec,
    layout: Layout,
    transfers: Sequence[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    loads: Sequence[RelayLoad],
    target: Spec | None = None,
) -> Plan:
    """The plan from the complete runs of ``spec.seeds`` (the pilot), for
    ``spec`` or, scaled, for ``target``: a larger design of the same
    hypotheses (matched by name), whose spread between networks is taken to
    fall as 1 / its relays (assumed, as for the 2x relays alternative)."""
    seeds = set(spec.seeds)
    transfers = [t for t in transfers if t.seed in seeds]
    planned = target or spec
    measurable = replace(spec, hypotheses=pilot_hypotheses(spec, planned))
    rounds = hypothesis_rounds(measurable, layout, transfers)
    bandwidths = [b for b in bandwidths if b.seed in seeds]
    loads = [r for r in loads if r.seed in seeds]
    spreads = {
        h.name: s
        for h in measurable.hypotheses
        if (s := spread(h, transfers, bandwidths, rounds)) is not None
    }
    base = scaling(spec, planned) if target else Alternative("pilot")
    moved: dict[tuple[str, int], float] = {}
    for t in transfers:
        if t.measured and t.success:
            moved[(t.variant, t.seed)] = moved.get((t.variant, t.seed), 0.0) + t.size
    costs, shapes, placements = [], [], []
    for variant, seed in spec.runs():
        run_dir = layout.run_dir(variant.name, seed)
        if run_status(run_dir) != STATUS_COMPLETE:
            continue
        manifest = read_manifest(run_dir)
        shapes.append(_hosts(manifest))
        cpu = run_cpu_seconds(run_dir)
        if cpu is None:
            continue
        wall = sum(
            float(manifest.get("phases", {}).get(k, 0.0))
            for k in ("generate_s", "simulate_s", "collect_s")
        )
        costs.append(RunCost(variant.name, seed, cpu, wall, moved.get((variant.name, seed), 0.0)))
        placement = manifest.get("placement")
        placements.append(placement if isinstance(placement, dict) else {})
    # A network's hosts as the mean over the pilot's runs: its variants'
    # scenarios may measure different clients.
    measured_clients, clients, relays, hosts = (
        (sum(column) / len(shapes) for column in zip(*shapes, strict=True))
        if shapes
        else (0.0, 0.0, 0.0, 0.0)
    )
    cost = cost_model(costs, measured_clients / hosts if hosts else 0.0)
    measure_share = spec.duration.measure / (spec.duration.bootstrap + spec.duration.measure)
    busiest = busiest_utilisation(loads)
    roles = busiest_by_role(loads)
    predictions = predict(
        spreads,
        planned.hypotheses,
        cost,
        len(planned.variants),
        measure_share,
        roles,
        measured_clients / clients if clients else 1.0,
        alternatives_for(round(measured_clients * base.clients)),
        base,
        later_variants(planned),
        class_demand(spec, planned, transfers) if target else None,
    )
    return Plan(
        tuple(sorted(seeds)),
        len(planned.variants),
        round(measured_clients),
        round(relays),
        spreads,
        cost,
        busiest,
        roles,
        predictions,
        planned.hypotheses,
        spec.name,
        base,
        pilot_conditions(placements, cost, costs),
    )


def plan_data(plan: Plan) -> dict[str, Any]:
    """The plan as plain data (plan.json)."""
    return {
        "seeds": list(plan.seeds),
        "spreads": {name: vars(s) for name, s in plan.spreads.items()},
        "cost": vars(plan.cost) if plan.cost else None,
        "pilot_conditions": vars(plan.conditions) if plan.conditions else None,
        "busiest": plan.busiest,
        "busiest_by_position": plan.busiest_roles,
        "designs": [
            {
                "design": p.alternative.name,
                "rule_max": p.rule_max,
                "expected_seeds": p.expected_seeds,
                "fixed_seeds": p.fixed_seeds,
                "cpu_hours_expected": p.cpu_hours_expected,
                "cpu_hours_max": p.cpu_hours_max,
                "busiest": p.busiest,
                "loads": p.loads,
            }
            for p in plan.predictions
        ],
    }
