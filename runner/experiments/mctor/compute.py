"""MCTor's result: rounds of parallel streams by variant, the fairness gap
between two users, and the connections and circuits on each measured
client's pinned path, with the checks that fail a run."""

from __future__ import annotations

from dataclasses import dataclass, field

from runner.analyses.inputs import Inputs
from runner.analyses.workload_rounds import (
    FairnessGap,
    PhaseSummary,
    class_phases,
    cycles_completed,
    fairness_gaps,
    rounds,
    summarize,
    too_few_rounds,
)
from runner.checks import Failure
from runner.experiments.mctor.connections import (
    CircuitSpread,
    HopCheck,
    StreamCircuits,
    circuit_spread,
    hop_checks,
    pinned_path,
    stream_circuits,
)
from runner.experiments.mctor.fair_share import ShareCheck, share_checks
from runner.experiments.mctor.loss_gain import LossGain, loss_gains
from runner.experiments.mctor.tables import PLACEMENTS
from runner.spec.model import Spec, Variant
from runner.tables.schema import SERVED


def stream_rule(variant: Variant) -> str:
    """The MCTorStreamRule a variant gives its clients (tor's default: uniform)."""
    for lines in variant.torrc.values():
        for line in lines:
            key, _, value = line.partition(" ")
            if key == "MCTorStreamRule":
                return value.strip()
    return "uniform"


def pinned_paths(
    spec: Spec, measured_clients: dict[tuple[str, int], list[tuple[str, str]]]
) -> dict[tuple[str, int, str], tuple[str, ...]]:
    """(variant, seed, client) -> the path its variant's torrc pins for it
    (in any section a client of its class reads), for the measured clients
    that have one."""
    by_name = {v.name: v for v in spec.variants}
    paths = {}
    for (variant, seed), hosts in measured_clients.items():
        for host, cls in hosts:
            pinned = pinned_path(by_name[variant].client_torrc(cls))
            if pinned is not None:
                paths[(variant, seed, host)] = pinned
    return paths


def unpinned(
    measured_clients: dict[tuple[str, int], list[tuple[str, str]]],
    paths: dict[tuple[str, int, str], tuple[str, ...]],
    expected: dict[str, int],
) -> list[Failure]:
    """A failure for each measured client of a variant that expects MCTor
    connections but pins no path: without one there is no hop to check, and
    the run fails rather than leaving the connection tables empty."""
    return [
        Failure(
            variant,
            seed,
            "mctor-pinned-path",
            "no path pinned (EntryNodes, MiddleNodes and ExitNodes naming one relay each), "
            "so its connections cannot be checked",
            host,
        )
        for (variant, seed), hosts in measured_clients.items()
        if variant in expected
        for host, _ in hosts
        if (variant, seed, host) not in paths
    ]


@dataclass(frozen=True)
class MctorResult:
    asked: bool  # a class runs rounds, or a variant expects MCTor connections
    summaries: list[PhaseSummary]
    gaps: list[FairnessGap]
    expected: dict[str, int]  # variant -> connections per hop it expects
    hops: list[HopCheck]
    stream_circuits: list[StreamCircuits]
    spread: list[CircuitSpread]
    failures: list[Failure]
    # The change of N connections over one, per phase, beside the loss rate.
    loss_gains: list[LossGain] = field(default_factory=list)
    # (variant, seed) -> the cycles of every phase the run completed.
    cycles: dict[tuple[str, int], int] = field(default_factory=dict)
    # Claim M8's fair share beside the measured throughput of N connections.
    shares: list[ShareCheck] = field(default_factory=list)


def mctor_result(inp: Inputs) -> MctorResult:
    spec = inp.spec
    phases_by_class = class_phases(spec)
    expected = {
        v.name: v.expect["mctor_connections"]
        for v in spec.variants
        if "mctor_connections" in v.expect
    }
    if not phases_by_class and not expected:
        return MctorResult(False, [], [], {}, [], [], [], [])
    variants = inp.variants
    all_rounds = rounds(inp.transfers, SERVED.read_from(inp.layout), phases_by_class)
    summaries = summarize(all_rounds, variants)
    gaps = fairness_gaps(all_rounds, variants)
    gains = loss_gains(spec, all_rounds)
    few = too_few_rounds(all_rounds, spec.checks.min_rounds_per_phase)
    cycles, shares = cycles_completed(all_rounds), share_checks(spec, gains)
    if not expected:
        return MctorResult(True, summaries, gaps, {}, [], [], [], few, gains, cycles, shares)
    paths = pinned_paths(spec, inp.measured_clients)
    placements = PLACEMENTS.read_from(inp.layout)
    hops = hop_checks(placements, paths, expected)
    circuits_expected = {
        v.name: v.expect.get("mctor_circuits") or v.expect["mctor_connections"]
        for v in spec.variants
        if "mctor_connections" in v.expect
    }
    used = stream_circuits(inp.circuits, paths.keys(), circuits_expected)
    spread = circuit_spread(placements, inp.circuits, paths, expected)
    failures = few + unpinned(inp.measured_clients, paths, expected)
    failures += [hop_failure(h) for h in hops if not h.ok]
    failures += [circuits_failure(u) for u in used if u.ok is False]
    failures += [spread_failure(s) for s in spread if s.ok is False]
    return MctorResult(
        True, summaries, gaps, expected, hops, used, spread, failures, gains, cycles, shares
    )


def hop_failure(hop: HopCheck) -> Failure:
    usable = "no placement logged" if hop.usable_connections is None else hop.usable_connections
    return Failure(
        hop.variant,
        hop.seed,
        "mctor-connections",
        f"{usable} usable connections, expected {hop.expected}",
        f"{hop.host} → {hop.peer}",
    )


def circuits_failure(used: StreamCircuits) -> Failure:
    return Failure(
        used.variant,
        used.seed,
        "mctor-circuits",
        f"streams on {used.circuits} circuits, expected at least {used.expected}",
        used.host,
    )


def spread_failure(spread: CircuitSpread) -> Failure:
    return Failure(
        spread.variant,
        spread.seed,
        "mctor-circuit-spread",
        f"{spread.client}'s {spread.circuits} stream circuits sit on {spread.connections} "
        f"connections ({spread.followed} followed), expected {spread.expected}",
        f"{spread.host} → {spread.peer}",
    )
