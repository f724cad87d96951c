"""The load check: how busy the relays were and how much of their access
links the clients got, per run, and whether a spec's required load held.

A relay's utilisation (relay_load.csv) is per second the larger of the
bytes its tor read over its link's download capacity and wrote over its
upload capacity; a run's figure for a
role is the mean over its relays of their mean over the measured period. A
client's share of its access link is its average bandwidth (the payload of
its completed transfers over their times to last byte, as in
runner.analyses.client_bandwidth) over its download link.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from runner.analyses.client_bandwidth import per_client
from runner.analyses.inputs import Inputs
from runner.analyses.stats import Estimate, level_ci
from runner.checks import Failure
from runner.spec.model import ALL_RELAYS, BUSIEST, LOAD_ROLES
from runner.tables.schema import CLIENTS, RELAY_LOAD, ClientRow, RelayLoad, TransferRow


@dataclass(frozen=True)
class RunLoad:
    """One run's relays of one role (or all: ALL_RELAYS)."""

    variant: str
    seed: int
    role: str
    relays: int
    mean: float  # mean over the relays of their mean utilisation
    p90: float  # mean over the relays of their 90th percentile
    busiest: float  # the largest of the relays' mean utilisations


def run_loads(loads: list[RelayLoad]) -> list[RunLoad]:
    """Per run: each role's figures, then all relays'."""
    groups: dict[tuple[str, int, str], list[RelayLoad]] = defaultdict(list)
    for load in loads:
        groups[(load.variant, load.seed, load.role)].append(load)
        groups[(load.variant, load.seed, ALL_RELAYS)].append(load)
    order = (*LOAD_ROLES, ALL_RELAYS)
    return [
        RunLoad(
            variant,
            seed,
            role,
            len(members),
            statistics.fmean(m.mean for m in members),
            statistics.fmean(m.p90 for m in members),
            max(m.mean for m in members),
        )
        for (variant, seed, role), members in sorted(
            groups.items(), key=lambda kv: (kv[0][0], kv[0][1], order.index(kv[0][2]))
        )
    ]


def load_failures(
    runs: list[RunLoad],
    required: dict[str, tuple[float, float]],
    variants: tuple[str, ...] = (),
) -> list[Failure]:
    """A failure per run and role whose mean utilisation (or, for "busiest
    <role>", its busiest relay's) is outside the spec's range; only runs of
    ``variants`` where it names some."""
    failures = []
    for run in runs:
        if variants and run.variant not in variants:
            continue
        for key, what, value in (
            (run.role, f"{run.role} relays' mean utilisation", run.mean),
            (BUSIEST + run.role, f"busiest {run.role} relay's mean utilisation", run.busiest),
        ):
            if key not in required:
                continue
            low, high = required[key]
            if not low <= value <= high:
                state = "idle" if value < low else "saturated"
                message = f"{what} {value:.0%} is outside the required {low:.0%}-{high:.0%}"
                failures.append(Failure(run.variant, run.seed, "load", f"{message} ({state})"))
    return failures


def role_summary(
    runs: list[RunLoad], variants: list[str]
) -> dict[tuple[str, str], tuple[Estimate, Estimate, Estimate]]:
    """(variant, role) -> mean, 90th-percentile and busiest relay's mean
    utilisation over seeds."""
    per: dict[tuple[str, str], list[RunLoad]] = defaultdict(list)
    for run in runs:
        per[(run.variant, run.role)].append(run)
    return {
        key: (
            # No ceiling: tor's token bucket can burst past the link's rate
            # within a one-second bin.
            level_ci([r.mean for r in members]),
            level_ci([r.p90 for r in members]),
            level_ci([r.busiest for r in members]),
        )
        for key, members in per.items()
        if key[0] in variants
    }


def link_shares(
    transfers: list[TransferRow], clients: list[ClientRow]
) -> dict[tuple[str, str], Estimate]:
    """(variant, measured class) -> over seeds, the seed's median over its
    clients of average bandwidth / download link."""
    links = {(c.variant, c.seed, c.host): c.bandwidth_down_bits for c in clients}
    per_seed: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    # per_client counts measured clients' transfers only.
    for b in per_client(transfers, clients):
        link = links[(b.variant, b.seed, b.host)] / 8
        per_seed[(b.variant, b.group)][b.seed].append(b.bytes / b.seconds / link)
    return {
        # A transfer's payload over its time to last byte cannot beat its link.
        key: level_ci([statistics.median(v) for v in seeds.values()], ceiling=1.0)
        for key, seeds in per_seed.items()
    }


@dataclass(frozen=True)
class LoadResult:
    runs: list[RunLoad]
    failures: list[Failure]
    # (variant, role) -> mean, p90 and busiest relay's utilisation over seeds
    summary: dict[tuple[str, str], tuple[Estimate, Estimate, Estimate]]
    shares: dict[tuple[str, str], Estimate]  # (variant, class) -> share of access link


def load_result(inp: Inputs) -> LoadResult:
    spec = inp.spec
    runs = run_loads(RELAY_LOAD.read_from(inp.layout))
    return LoadResult(
        runs,
        load_failures(runs, spec.checks.load, spec.checks.load_variants),
        role_summary(runs, inp.variants),
        link_shares(inp.transfers, CLIENTS.read_from(inp.layout)),
    )
