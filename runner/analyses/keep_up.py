"""The keep-up check (checks.keep_up, runner.spec.keep_up): on every seed
where both ran, a variant's run against its reference's: its busiest relay
as busy, within some points, or a class's clients a share of the
reference's bandwidth; judged on each seed, or (``judge: mean``) on the
means over the seeds. A mechanism that starves the path (windows that
never open, credit that never returns) fails here, while a slower design
that keeps the relays busy does not."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from runner.analyses.client_bandwidth import per_client
from runner.analyses.inputs import Inputs
from runner.analyses.load import run_loads
from runner.checks import Failure
from runner.spec.keep_up import KeepUp
from runner.spec.model import ALL_RELAYS
from runner.tables.schema import CLIENTS, RELAY_LOAD, ClientRow, RelayLoad, TransferRow


@dataclass(frozen=True)
class KeepUpJudged:
    """A variant's value against its reference's under one keep-up item."""

    variant: str
    reference: str
    metric: str
    group: str | None
    value: float  # utilisation as a fraction, or KiB/s
    reference_value: float
    required: float  # the least value that keeps up
    rule: str

    @property
    def passed(self) -> bool:
        return self.value >= self.required


@dataclass(frozen=True)
class KeepUpRun(KeepUpJudged):
    """One seed of one keep-up item."""

    seed: int = 0


@dataclass(frozen=True)
class KeepUpMean(KeepUpJudged):
    """An item judged on its means over the seeds both ran."""

    seeds: int = 0


@dataclass(frozen=True)
class KeepUpResult:
    runs: list[KeepUpRun]
    missing: list[str]  # items with a seed where one of the two runs is absent
    failures: list[Failure]
    means: list[KeepUpMean] = field(default_factory=list)


def busiest_relays(loads: list[RelayLoad]) -> dict[tuple[str, int], float]:
    """(variant, seed) -> the busiest relay's mean utilisation."""
    return {(r.variant, r.seed): r.busiest for r in run_loads(loads) if r.role == ALL_RELAYS}


def class_bandwidths(
    transfers: list[TransferRow],
    clients: list[ClientRow],
    measured: dict[tuple[str, int], list[tuple[str, str]]],
) -> dict[tuple[str, int, str], float]:
    """(variant, seed, class) -> the median over the class's measured clients
    of a complete run of each one's bandwidth (KiB/s; 0 for a client that
    completed no transfer: starving it is what the check looks for)."""
    got = {(b.variant, b.seed, b.host): b.kib_per_s for b in per_client(transfers, clients)}
    per: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for (variant, seed), hosts in measured.items():
        for host, group in hosts:
            per[(variant, seed, group)].append(got.get((variant, seed, host), 0.0))
    return {key: statistics.median(values) for key, values in per.items()}


def _value(
    item: KeepUp,
    variant: str,
    seed: int,
    busiest: dict[tuple[str, int], float],
    bandwidths: dict[tuple[str, int, str], float],
) -> float | None:
    if item.metric == "busiest_relay":
        return busiest.get((variant, seed))
    return bandwidths.get((variant, seed, item.group or ""))


def keep_up_result(inp: Inputs) -> KeepUpResult:
    items = inp.spec.checks.keep_up
    if not items:
        return KeepUpResult([], [], [])
    busiest = busiest_relays(RELAY_LOAD.read_from(inp.layout))
    bandwidths = class_bandwidths(
        inp.transfers, CLIENTS.read_from(inp.layout), inp.measured_clients
    )
    runs, missing, means = [], [], []
    failures: list[Failure] = []
    seeds = sorted({seed for _, seed in inp.measured_clients})
    for item in items:
        mine: list[KeepUpRun] = []
        # Seeds a variant does not run at by design (later seed rounds of
        # other variants) are neither checked nor missing.
        both = set(inp.spec.seeds_of(item.variant)) & set(inp.spec.seeds_of(item.reference))
        for seed in (s for s in seeds if s in both):
            ours = _value(item, item.variant, seed, busiest, bandwidths)
            theirs = _value(item, item.reference, seed, busiest, bandwidths)
            if ours is None or theirs is None:
                # Only where one of the two ran: a failed run is reported as such.
                if {(item.variant, seed), (item.reference, seed)} & set(inp.measured_clients):
                    missing.append(f"{item.variant}/seed-{seed} against {item.reference}")
                continue
            mine.append(
                KeepUpRun(
                    item.variant,
                    item.reference,
                    item.metric,
                    item.group,
                    ours,
                    theirs,
                    item.required(theirs),
                    item.rule(),
                    seed=seed,
                )
            )
        runs += mine
        if not item.over_seeds:
            failures += [run_failure(r) for r in mine if not r.passed]
        elif mine:
            mean = _mean_of(item, mine)
            means.append(mean)
            if not mean.passed:
                failures.append(mean_failure(mean))
    return KeepUpResult(runs, missing, failures, means)


def run_failure(run: KeepUpRun) -> Failure:
    return Failure(
        run.variant,
        run.seed,
        "keep-up",
        f"does not keep up with {run.reference} ({shown(run.metric, run.value)} against "
        f"{shown(run.metric, run.reference_value)}; {run.rule})",
    )


def mean_failure(mean: KeepUpMean) -> Failure:
    """Judged over the seeds: the variant's, not one run's."""
    return Failure(
        mean.variant,
        None,
        "keep-up",
        f"does not keep up with {mean.reference} over {mean.seeds} seeds (mean "
        f"{shown(mean.metric, mean.value)} against {shown(mean.metric, mean.reference_value)}; "
        f"{mean.rule})",
    )


def _mean_of(item: KeepUp, runs: list[KeepUpRun]) -> KeepUpMean:
    """The item judged on the means of its runs' values and of their
    references' over the seeds both ran."""
    value = statistics.fmean(r.value for r in runs)
    reference = statistics.fmean(r.reference_value for r in runs)
    return KeepUpMean(
        item.variant,
        item.reference,
        item.metric,
        item.group,
        value,
        reference,
        item.required(reference),
        f"{item.rule()}, on the means over the seeds",
        seeds=len(runs),
    )


def shown(metric: str, value: float) -> str:
    """A keep-up value as the report and the failures write it."""
    return f"{value:.0%}" if metric == "busiest_relay" else f"{value:.0f} KiB/s"
