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
time), from the CPU seconds each run recorded (the runs table,
runner/tables/runs.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from runner.analyses.answers import (
    CONFIRMATORY,
    family,
    first_step_alpha,
    hypothesis_relay_work,
    hypothesis_rounds,
    per_seed_samples,
    pooled_ratios,
    reading_of,
    seed_change,
    seeded_samples,
    split_direction,
)
from runner.analyses.client_bandwidth import ClientBandwidth
from runner.analyses.power import (
    MAX_SEEDS,
    Target,
    seeds_to_decisive,
    seeds_to_decisive_many,
    simulate_rounds,
)
from runner.analyses.relay_work import RelayWork, unmeasured
from runner.analyses.runs import complete, read_spec_runs
from runner.analyses.sequential import ALPHA, Reading, SequentialDesign
from runner.analyses.stats import ClientValues, resample_within
from runner.analyses.workload_rounds import Round
from runner.layout import Layout
from runner.planning.joint_plan import (
    FIRST_ROUND,
    LAST_LOOK_INFLATION,
    SIMULATED_UP_TO,
    JointOutcome,
    JointRule,
    Question,
    correlation,
    smallest_rule,
    waited_for,
)
from runner.planning.plan_load import (
    busiest_by_role,
    busiest_utilisation,
    class_demand,
    role_capacity,
)
from runner.planning.seed_rounds import variants_compared
from runner.spec.hypotheses import RELAY_METRICS, Hypothesis
from runner.spec.model import DEFAULT_DECIDE_FROM, Spec
from runner.tables.runs import RunRow
from runner.tables.schema import RelayLoad, TransferRow

PROBABILITY = 0.8
DEFAULT_READING = Reading()
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
    # (seed, log ratio) of each paired seed: how hypotheses move together
    per_seed: tuple[tuple[int, float], ...] = ()

    def predicted(self, clients: float, relays: float, measure: float) -> float:
        """The variance with ``clients`` times the measured clients,
        ``relays`` times the relays and ``measure`` times the measurement."""
        per_transfer = (self.transfers or 0.0) / (clients * measure)
        per_client = (self.clients or 0.0) / clients
        return self.between / relays + per_client + per_transfer


def _log_var(draws: Iterable[float]) -> float:
    logs = [math.log(d) for d in draws if d > 0 and math.isfinite(d)]
    return float(np.var(logs, ddof=1)) if len(logs) > 1 else 0.0


def paired_client_variance(
    values: ClientValues, reference: ClientValues, statistic: Any, rng: np.random.Generator
) -> float:
    """The variance of a seed's log ratio between its measured clients
    (their transfers' noise included): the bootstrap variance when the
    clients are resampled, the same draw of clients in both arms (the same
    clients ran in both), times n / (n - 1) for n clients, since the
    bootstrap's is that much too small (half with two clients)."""
    names = sorted(set(values) & set(reference))
    n = len(names)
    if n < 2:
        return 0.0
    draws = []
    for _ in range(_BOOTSTRAP):
        picks = [names[k] for k in rng.integers(0, n, n)]
        top = statistic({f"{c}/{i}": values[c] for i, c in enumerate(picks)})
        bottom = statistic({f"{c}/{i}": reference[c] for i, c in enumerate(picks)})
        if top > 0 and bottom > 0:
            draws.append(top / bottom)
    return _log_var(draws) * n / (n - 1)


def transfer_variance(side: ClientValues, statistic: Any, rng: np.random.Generator) -> float:
    """The variance of the log of a seed's statistic between each client's
    own transfers: the bootstrap variance when each client's values are
    resampled, the clients kept."""
    return _log_var(statistic(resample_within(side, rng)) for _ in range(_BOOTSTRAP))


# From this many paired seeds the total is the seeds' own spread, and the
# parts split off it never add up to more than it.
OWN_SPREAD_SEEDS = 3


def spread(
    h: Hypothesis,
    transfers: Sequence[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round] = (),
    work: Sequence[RelayWork] = (),
) -> Spread | None:
    """The parts of one hypothesis's spread; None under two paired seeds.
    The client part is the clients' own (what resampling the clients, the
    same ones in both arms, adds beyond their transfers' noise), so that
    more clients and a longer measurement are each credited once. From
    OWN_SPREAD_SEEDS seeds the seeds' own spread is the total the design
    as run predicts: where the within-seed bootstraps exceed it, they are
    scaled down to fit inside it. An interaction's or a pooled hypothesis's
    spread is its seeds' spread alone (no part is split off), and so is a
    relay metric's (its values are relays', which more clients do not
    average: ``work``, the relays' CPU and bytes per run)."""
    if h.sizes or h.ratio_of_ratios or h.metric in RELAY_METRICS:
        return _seeds_only(h, transfers, bandwidths, rounds, work)
    samples, statistic = per_seed_samples(h, transfers, bandwidths, rounds)
    seeded = seeded_samples(h, samples)
    rng = np.random.default_rng(0)
    logs, client_parts, transfer_parts, paired_seeds = [], [], [], []
    for seed, (values, reference) in seeded:
        if not values or not reference:
            continue
        top, bottom = statistic(values), statistic(reference)
        if not (top > 0 and bottom > 0):
            continue
        logs.append(math.log(top / bottom))
        paired_seeds.append(seed)
        within = sum(transfer_variance(side, statistic, rng) for side in (values, reference))
        transfer_parts.append(within)
        if min(len(values), len(reference)) > 1:
            between = paired_client_variance(values, reference, statistic, rng)
            client_parts.append(max(between - within, 0.0))
    if len(logs) < 2:
        return None
    total = float(np.var(logs, ddof=1))
    transfer_part = float(np.mean(transfer_parts))
    client_part = float(np.mean(client_parts)) if client_parts else None
    parts = transfer_part + (client_part or 0.0)
    if len(logs) >= OWN_SPREAD_SEEDS and parts > total:
        # The seeds agree more than the bootstraps say: trust the seeds.
        scale = total / parts
        transfer_part *= scale
        client_part = None if client_part is None else client_part * scale
    between = max(total - transfer_part - (client_part or 0.0), 0.0)
    return Spread(
        h.name,
        len(logs),
        float(np.mean(logs)),
        total,
        transfer_part,
        client_part,
        between,
        tuple(zip(paired_seeds, logs, strict=True)),
    )


def _seeds_only(
    h: Hypothesis,
    transfers: Sequence[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round],
    work: Sequence[RelayWork] = (),
) -> Spread | None:
    """The spread of a ratio of ratios, a pooled hypothesis or a relay
    metric: its seeds' alone."""
    if h.sizes:
        per_seed = tuple(
            (seed, math.log(r)) for seed, r in pooled_ratios(h, transfers, bandwidths, rounds)
        )
    else:
        samples, statistic = per_seed_samples(h, transfers, bandwidths, rounds, work)
        per_seed = tuple(
            (seed, math.log(ratios[0]))
            for seed, sides in seeded_samples(h, samples)
            if (ratios := seed_change(h, [sides], statistic).ratios)
        )
    if len(per_seed) < 2:
        return None
    logs = [log for _, log in per_seed]
    var = float(np.var(logs, ddof=1))
    return Spread(h.name, len(logs), float(np.mean(logs)), var, None, None, var, per_seed)


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
    # The `max` of seeds {min: 5, step: 2} whose rule decides every
    # hypothesis, all together, with 80% probability (runner/planning/joint_plan.py).
    rule_max: int
    expected_seeds: float  # seeds that rule is expected to run
    cpu_s_per_seed: float  # every variant once
    cpu_hours_expected: float
    cpu_hours_max: float
    busiest: float | None  # the busiest relay's predicted mean utilisation
    loads: bool  # the measured clients would load the network
    wall_per_cpu: float = 1.0  # a run's wall time over its CPU time
    # Variants the rounds after the first run (seeds: {later: hypotheses});
    # None: every variant.
    later_variants: int | None = None
    all_decided: float = math.nan  # P(every hypothesis decided) at rule_max
    confirmatory_decided: float = math.nan  # P(every confirmatory one decided); nan: none
    simulated: bool = True  # False: rule_max beyond SIMULATED_UP_TO, approximated
    # An 80% interval on the seeds a fixed-size design needs (the largest of
    # fixed_seeds), over what the pilot leaves unknown (seeds_needed_interval);
    # None where not worked out (only the first design has it).
    seeds_interval: tuple[int, int] | None = None
    # The hypotheses the rounds wait for (rounds_wait_for); empty: every one.
    waited: frozenset[str] = frozenset()

    @property
    def seeds_point(self) -> int | None:
        """The seeds a fixed-size design needs to decide each hypothesis the
        rounds wait for with 80% probability, at the pilot's figures: the
        largest of their fixed_seeds."""
        found = [
            n for name, n in self.fixed_seeds.items() if not self.waited or name in self.waited
        ]
        return max(found) if found else None

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


def rule_max_seeds(
    effect: float,
    variance: float,
    target: Target,
    first: int = FIRST_ROUND,
    alpha: float = ALPHA,
) -> tuple[int, float]:
    """One hypothesis on its own: the smallest ``max`` of seeds {min: first,
    step: 2} whose rule at level ``alpha`` decides it with PROBABILITY, and
    the seeds it is expected to run; (MAX_SEEDS + 1, nan) if none up to
    MAX_SEEDS does. The plan's ``max`` is the whole rule's over every
    hypothesis (joint_plan.smallest_rule), which the largest of these can
    understate (several hypotheses needing about as many seeds must all be
    decided at once) or overstate (Holm's later steps read the confirmatory
    ones still open at a larger level than the first step's, taken here)."""
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


def hypothesis_correlation(
    spreads: dict[str, Spread], hypotheses: Sequence[Hypothesis]
) -> tuple[list[str], np.ndarray]:
    """The hypotheses with a spread, in order, and the correlation of their
    seeds' log ratios (joint_plan.correlation). Taken as the same for every
    design: a design that averages more clients or relays may change it."""
    names = [h.name for h in hypotheses if h.name in spreads]
    return names, correlation([dict(spreads[name].per_seed) for name in names])


def plan_questions(
    spreads: dict[str, Spread],
    hypotheses: Sequence[Hypothesis],
    alt: Alternative,
    reading: Reading = DEFAULT_READING,
) -> tuple[dict[str, int], list[Question]]:
    """Per hypothesis with a spread, under design ``alt``: the seeds a
    fixed-size design needs (at the family's first-step level, read as
    ``reading`` says) and the question the joint simulation asks."""
    fixed: dict[str, int] = {}
    questions = []
    for h in hypotheses:
        s = spreads.get(h.name)
        if s is None:
            continue
        sd = math.sqrt(s.predicted(alt.clients, alt.relays, alt.measure))
        target = Target(h.direction, h.smallest_change)
        alpha = first_step_alpha(h, hypotheses)
        split = split_direction(h) is not None
        fixed[h.name] = seeds_to_decisive(
            s.effect, sd, target, PROBABILITY, alpha, reading=reading, split=split
        )
        confirmatory = family(h) == CONFIRMATORY
        claim = h.claim.id if confirmatory and h.claim is not None else None
        questions.append(Question(h.name, s.effect, sd, target, confirmatory, claim))
    return fixed, questions


def _joint_rule(
    fixed: dict[str, int],
    questions: list[Question],
    corr: np.ndarray,
    reading: Reading = DEFAULT_READING,
    decide_from: int = DEFAULT_DECIDE_FROM,
) -> JointRule:
    """The joint rule, searched from the most seeds one hypothesis the
    rounds wait for needs."""
    if not questions:
        return JointRule(0, JointOutcome(math.nan, math.nan, 0.0))
    waited = waited_for(questions)
    start = max(fixed[q.name] for q, w in zip(questions, waited, strict=True) if w)
    return smallest_rule(
        questions, corr, start, alpha=ALPHA, reading=reading, decide_from=decide_from
    )


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
    reading: Reading = DEFAULT_READING,
    decide_from: int = DEFAULT_DECIDE_FROM,
) -> list[Prediction]:
    """``measure_share``: the measurement's share of the simulated time;
    ``busiest``: per relay role, the pilot's busiest relay's utilisation;
    ``measured_share``: the measured clients' share of the network's
    traffic (their load grows with their number); ``base``: how the design
    planned for differs from the pilot's (the alternatives apply on top);
    ``later_variants``: the variants rounds after the first run, if not all;
    ``base_demand``: times the pilot's traffic that ``base``'s clients offer
    (by default, as its measured clients grow). Each design's ``max`` and
    expected seeds are its whole rule's, over every hypothesis at once
    (runner/planning/joint_plan.py); the first design also gets the interval
    on the seeds needed (seeds_needed_interval)."""
    found = []
    _, corr = hypothesis_correlation(spreads, hypotheses)
    for index, named in enumerate(alternatives):
        alt = named.on(base)
        fixed, questions = plan_questions(spreads, hypotheses, alt, reading)
        joint = _joint_rule(fixed, questions, corr, reading, decide_from)
        most, expected = joint.rule_max, joint.outcome.expected_seeds
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
                most,
                expected,
                per_seed,
                per_run * rule_runs(variants, expected, later_variants) / 3600
                if math.isfinite(expected)
                else math.inf,
                per_run * rule_runs(variants, most, later_variants) / 3600
                if most <= MAX_SEEDS
                else math.inf,
                loaded,
                loaded is not None and loaded > LOADED,
                cost.wall_per_cpu if cost else 1.0,
                later_variants,
                joint.outcome.all_decided,
                joint.outcome.confirmatory_decided,
                joint.simulated,
                seeds_needed_interval(spreads, hypotheses, alt, reading=reading)
                if index == 0
                else None,
                frozenset(rounds_wait_for(hypotheses)),
            )
        )
    return found


INTERVAL_DRAWS = 1000  # draws of the pilot's unknowns: the interval's ends to a few percent
INTERVAL = (0.1, 0.9)  # an 80% interval


def rounds_wait_for(hypotheses: Sequence[Hypothesis]) -> set[str]:
    """The names of the hypotheses the rounds wait for: the confirmatory
    ones, or every one where none is."""
    confirmatory = {h.name for h in hypotheses if family(h) == CONFIRMATORY}
    return confirmatory or {h.name for h in hypotheses}


def seeds_needed_interval(
    spreads: dict[str, Spread],
    hypotheses: Sequence[Hypothesis],
    alt: Alternative,
    draws: int = INTERVAL_DRAWS,
    reading: Reading = DEFAULT_READING,
) -> tuple[int, int] | None:
    """An 80% interval on the seeds a fixed-size design ``alt`` needs to
    decide every hypothesis the rounds wait for (the confirmatory ones, or
    all where none is), for what the pilot's few seeds leave unknown of
    each change and spread; None with no hypothesis to draw.

    The seeds needed are the largest over hypotheses of the seeds a
    fixed-size design needs to decide each with PROBABILITY on its own, at
    its first-step level, as the table's seeds to decide (not the joint
    rule, too slow to simulate per draw), by
    power.seeds_to_decisive_many (closed form; the simulation would take
    seconds). Per draw and hypothesis, with n the pilot's paired seeds
    (Spread.seeds): the variance is the predicted one times (n - 1) /
    chi2(n - 1), and the change is drawn from N(the pilot's change, the
    pilot's variance times that same factor / n): the true ones as n normal
    seeds leave them (a flat prior). Both are drawn for every hypothesis at
    once, as correlated as the hypotheses' seeds (hypothesis_correlation):
    the chi-squares are those of a pilot's seeds drawn again with that
    correlation. The generator's seed is fixed."""
    names, corr = hypothesis_correlation(spreads, hypotheses)
    if not names:
        return None
    by_name = {h.name: h for h in hypotheses}
    rng = np.random.default_rng(0)
    lower = np.linalg.cholesky(corr)
    most = max(spreads[name].seeds for name in names)
    pilots = rng.standard_normal((draws, most, len(names))) @ lower.T
    errors = rng.standard_normal((draws, len(names))) @ lower.T
    needed = np.zeros(draws, dtype=int)
    waited = rounds_wait_for(hypotheses)
    for j, name in enumerate(names):
        s, h = spreads[name], by_name[name]
        if h.name not in waited:
            continue
        pilot = pilots[:, : s.seeds, j]
        squares = ((pilot - pilot.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
        factor = (s.seeds - 1) / squares  # (n - 1) / chi2(n - 1)
        effects = s.effect + errors[:, j] * np.sqrt(s.total * factor / s.seeds)
        sds = np.sqrt(s.predicted(alt.clients, alt.relays, alt.measure) * factor)
        target = Target(h.direction, h.smallest_change)
        alpha = first_step_alpha(h, hypotheses)
        split = split_direction(h) is not None
        needed = np.maximum(
            needed,
            seeds_to_decisive_many(effects, sds, target, PROBABILITY, alpha, reading, split),
        )
    low, high = np.quantile(needed, INTERVAL, method="inverted_cdf")
    return int(low), int(high)


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
    # hypothesis -> why the pilot's runs hold nothing it reads (relay CPU under Shadow)
    unmeasured: dict[str, str] = field(default_factory=dict)

    @property
    def best(self) -> Prediction | None:
        return cheapest(self.predictions)


def _hosts(run: RunRow) -> tuple[int, int, int, int]:
    """(measured clients, clients, relays, all hosts) of a run."""
    return len(run.measured_clients), run.clients, run.relays, run.hosts


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
        target.mean_measure() / pilot.mean_measure(),
        target.duration.bootstrap / pilot.duration.bootstrap,
        tuple(
            (role, capacity[role] / pilot_capacity[role])
            for role in sorted(capacity)
            if pilot_capacity.get(role)
        ),
    )


def later_variants(spec: Spec) -> int | None:
    """The variants ``spec``'s later seed rounds run, if not all."""
    if spec.seed_rounds is None or spec.seed_rounds.later == "all":
        return None
    if spec.seed_rounds.later == "family":
        confirmatory = [h for h in spec.hypotheses if family(h) == CONFIRMATORY]
        return len(variants_compared(spec, confirmatory or spec.hypotheses))
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
    work = [w for w in hypothesis_relay_work(measurable, layout) if w.seed in seeds]
    bandwidths = [b for b in bandwidths if b.seed in seeds]
    loads = [r for r in loads if r.seed in seeds]
    spreads = {
        h.name: s
        for h in measurable.hypotheses
        if (s := spread(h, transfers, bandwidths, rounds, work)) is not None
    }
    base = scaling(spec, planned) if target else Alternative("pilot")
    costs, shapes, placements = _pilot_runs(spec, layout, transfers)
    # A network's hosts as the mean over the pilot's runs: its variants'
    # scenarios may measure different clients.
    measured_clients, clients, relays, hosts = (
        (sum(column) / len(shapes) for column in zip(*shapes, strict=True))
        if shapes
        else (0.0, 0.0, 0.0, 0.0)
    )
    cost = cost_model(costs, measured_clients / hosts if hosts else 0.0)
    # Variants whose clients end after their cycles each simulate their own
    # time (runner.spec.pace): the mean over the variants stands for a run.
    measure = spec.mean_measure()
    measure_share = measure / (spec.duration.bootstrap + measure)
    busiest = busiest_utilisation(loads)
    roles = busiest_by_role(loads)
    # With ``later: family`` every round runs the family's variants alone.
    family_only = planned.seed_rounds is not None and planned.seed_rounds.later == "family"
    run_variants = later_variants(planned) if family_only else None
    predictions = predict(
        spreads,
        planned.hypotheses,
        cost,
        run_variants or len(planned.variants),
        measure_share,
        roles,
        measured_clients / clients if clients else 1.0,
        alternatives_for(round(measured_clients * base.clients)),
        base,
        None if family_only else later_variants(planned),
        class_demand(spec, planned, transfers) if target else None,
        reading_of(planned),
        planned.seed_rounds.decide_from if planned.seed_rounds else DEFAULT_DECIDE_FROM,
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
        {h.name: why for h in measurable.hypotheses if (why := unmeasured(h, work))},
    )


def _pilot_runs(
    spec: Spec, layout: Layout, transfers: Sequence[TransferRow]
) -> tuple[list[RunCost], list[tuple[int, int, int, int]], list[dict[str, Any]]]:
    """The pilot's complete runs: the cost of each that recorded its CPU
    time, with the bytes its measured clients moved, and where it ran; and
    the hosts of every one (``_hosts``)."""
    moved: dict[tuple[str, int], float] = {}
    for t in transfers:
        if t.measured and t.success:
            moved[(t.variant, t.seed)] = moved.get((t.variant, t.seed), 0.0) + t.size
    costs, shapes, placements = [], [], []
    for run in complete(read_spec_runs(spec, layout)):
        shapes.append(_hosts(run))
        if run.cpu_s is None:
            continue
        wall = sum(run.phase_s(name) or 0.0 for name in ("generate", "simulate", "collect"))
        moved_bytes = moved.get((run.variant, run.seed), 0.0)
        costs.append(RunCost(run.variant, run.seed, run.cpu_s, wall, moved_bytes))
        placements.append({"node": run.node, "jobs": run.jobs, "machine_cpus": run.machine_cpus})
    return costs, shapes, placements


def plan_data(plan: Plan) -> dict[str, Any]:
    """The plan as plain data (plan.json). Per design, ``all_decided`` and
    ``confirmatory_decided`` are the chances that its rule (``rule_max``)
    decides every hypothesis, and every confirmatory one, all together
    (``simulated`` false: approximated, see joint_plan.approximate_rule);
    ``seeds_needed`` is the fixed-size seeds at the pilot's figures and
    ``seeds_needed_interval`` its 80% interval over the pilot's unknowns;
    ``unmeasured``: per hypothesis the runs hold nothing for, why."""
    names, corr = hypothesis_correlation(plan.spreads, plan.hypotheses)
    return {
        "seeds": list(plan.seeds),
        "spreads": {name: vars(s) for name, s in plan.spreads.items()},
        "unmeasured": plan.unmeasured,
        "correlation": {"hypotheses": names, "matrix": corr.round(4).tolist()},
        "cost": vars(plan.cost) if plan.cost else None,
        "pilot_conditions": vars(plan.conditions) if plan.conditions else None,
        "busiest": plan.busiest,
        "busiest_by_position": plan.busiest_roles,
        "designs": [
            {
                "design": p.alternative.name,
                "rule_max": p.rule_max,
                "expected_seeds": p.expected_seeds,
                "all_decided": _finite(p.all_decided),
                "confirmatory_decided": _finite(p.confirmatory_decided),
                "simulated": p.simulated,
                "fixed_seeds": p.fixed_seeds,
                "seeds_needed": p.seeds_point,
                "seeds_needed_interval": list(p.seeds_interval) if p.seeds_interval else None,
                "cpu_hours_expected": p.cpu_hours_expected,
                "cpu_hours_max": p.cpu_hours_max,
                "busiest": p.busiest,
                "loads": p.loads,
            }
            for p in plan.predictions
        ],
    }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
