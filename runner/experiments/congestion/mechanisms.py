"""Congestion-control comparisons (experiments.md, section 4): which window
and transport each variant runs, downloads completed and download rates
per class with CIs across seeds, and each mechanism's own counters per
variant: hop feedback's totals, N23's credit, PCTCP's connections per
circuit."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, TypeVar

from runner.analyses.on_off import on_off_failures
from runner.analyses.stats import Estimate, level_ci, ratio_ci
from runner.checks import Failure
from runner.experiments.congestion.hop_feedback_log import HopFeedbackTotals, summed
from runner.experiments.congestion.hop_window_log import HopWindowTotals
from runner.experiments.congestion.n23_log import N23Totals
from runner.experiments.congestion.tables import HopFeedbackRow, HopWindowRow, N23Row
from runner.experiments.mctor.tables import PlacementRow
from runner.spec.model import Variant
from runner.tables.schema import TransferRow

R = TypeVar("R")

FIXED, VEGAS, MARUT = "fixed window", "Vegas", "Vegas + hop feedback"
MARUT_REMOTE = "Vegas + hop feedback (remote hops)"
HOP_WINDOW = "hop window"
HOP_WINDOW_MARUT = "hop window + Marut"
HOP_WINDOW_MARUT_REMOTE = "hop window + Marut (remote hops)"
HOP_WINDOW_MARUT_AUTHORS = "hop window + Marut (the authors')"
# Which congestion estimate each mechanism decides with, for the report.
ESTIMATES = {
    FIXED: "none: a fixed end-to-end window",
    VEGAS: "the sending end's own Vegas estimate (end-to-end RTT)",
    MARUT: "max(the sending end's Vegas estimate, every relay's queue of the circuit, "
    "its own included)",
    MARUT_REMOTE: "max(the sending end's Vegas estimate, the queues of the relays before it)",
    HOP_WINDOW: "every hop: its own hop RTT, BackTap's diff = cwnd x actualRtt/baseRtt - cwnd "
    "once per RTT",
    HOP_WINDOW_MARUT: "the sending end only: max(its own diff, the c_diff = max(diff, "
    "downstream c_diff) carried up from every hop); middles hold no window",
    HOP_WINDOW_MARUT_REMOTE: "the sending end only: the c_diff carried up from the next hops; "
    "middles hold no window",
    HOP_WINDOW_MARUT_AUTHORS: "the sending end only, over its first hop: max(its own diff, the "
    "c_diff carried back) once per first-hop RTT (tor-patches/staged/0010); middles hold no "
    "window",
}
N23_CREDIT = "credit of the next hop's free N2 + N3 cell buffer (N23)"
PCTCP_OPTION = "MCTorPerCircuit 1"  # tor-patches/0003's per-circuit connections


def window_of(variant: Variant) -> str:
    """The congestion control a variant's consensus selects: cc_alg=0 is the
    fixed window, cc_alg=2 Vegas, with cc_hop_feedback=1 Marut's feedback."""
    if variant.consensus.get("cc_alg") == 0:
        return FIXED
    feedback = variant.consensus.get("cc_hop_feedback")
    return {1: MARUT, 2: MARUT_REMOTE}.get(feedback, VEGAS) if feedback else VEGAS


def hop_window_of(variant: Variant) -> str | None:
    """The hop window a variant's consensus switches on (tor-patches/0007):
    hop_window=1, with hop_window_marut 1 (own and next hops' estimates), 2
    (next hops' only) or 3 (the authors' window over the first hop) at the
    source; None where it is off."""
    if variant.consensus.get("hop_window") != 1:
        return None
    marut = variant.consensus.get("hop_window_marut", 0)
    levels = {1: HOP_WINDOW_MARUT, 2: HOP_WINDOW_MARUT_REMOTE, 3: HOP_WINDOW_MARUT_AUTHORS}
    return levels.get(marut, HOP_WINDOW)


def estimate_of(variant: Variant) -> str:
    """The congestion estimate the variant's windows decide with (N23's
    credit is the next hop's free buffer space: it decides nothing)."""
    hop_window = hop_window_of(variant)
    if hop_window is None and replaces_e2e(variant):
        return f"per hop only: {N23_CREDIT}"
    estimate = ESTIMATES[hop_window or window_of(variant)]
    return estimate + (f"; per hop, {N23_CREDIT}" if is_n23(variant) else "")


def is_pctcp(variant: Variant) -> bool:
    """PCTCP: every circuit on a connection of its own (tor-patches/0003)."""
    return any(PCTCP_OPTION in lines for lines in variant.torrc.values())


def is_n23(variant: Variant) -> bool:
    """N23: per-hop credit for every circuit (tor-patches/0006)."""
    return variant.consensus.get("n23") == 1


NO_E2E = "no end-to-end window"


def replaces_e2e(variant: Variant) -> bool:
    """Hop flow control (N23, hop windows) in place of tor's fixed
    end-to-end window, as tor-patches/0007 runs it unless the consensus
    keeps the window (hop_flow_e2e_window=1); congestion control keeps its
    own."""
    hop_flow = is_n23(variant) or hop_window_of(variant) is not None
    kept = variant.consensus.get("hop_flow_e2e_window") == 1
    return hop_flow and not kept and window_of(variant) == FIXED


def mechanism_of(variant: Variant) -> str:
    """The window, and what runs beside it: PCTCP's transport, N23's credit."""
    extras = [name for name, on in (("PCTCP", is_pctcp(variant)), ("N23", is_n23(variant))) if on]
    window = NO_E2E if replaces_e2e(variant) else window_of(variant)
    return " + ".join([window, *extras, *filter(None, [hop_window_of(variant)])])


def scenario_of(variant: Variant) -> str:
    """The network scenario a variant runs: its ``scenario`` factor's level
    (a matrix's variants carry it), else the variant itself."""
    return variant.factors.get("scenario", variant.name)


MECHANISM_PARAMS = ("cc_hop_feedback", "n23", "hop_window")


def is_congestion_experiment(variants: Sequence[Variant]) -> bool:
    return any(p in v.consensus for v in variants for p in MECHANISM_PARAMS)


@dataclass(frozen=True)
class ClassResult:
    """One class of clients under one variant, over seeds."""

    variant: str
    cls: str
    completed: Estimate  # downloads completed per run
    rate_mbit: Estimate  # mean over a run's completed downloads of size / TTLB
    failed: int  # over all runs
    seeds: int


def _per_run(transfers: list[TransferRow]) -> dict[tuple[str, str, int], list[TransferRow]]:
    """Measured transfers by (variant, class, seed)."""
    per_run: dict[tuple[str, str, int], list[TransferRow]] = defaultdict(list)
    for row in transfers:
        if row.measured:
            per_run[(row.variant, row.cls, row.seed)].append(row)
    return per_run


def _completed_rates(rows: list[TransferRow]) -> list[float]:
    return [r.goodput_mbit for r in rows if r.goodput_mbit is not None]


def _mean_rate(rows: list[TransferRow]) -> float:
    """A run's mean over its completed downloads of size / TTLB (NaN if none)."""
    ok = _completed_rates(rows)
    return sum(ok) / len(ok) if ok else float("nan")


def class_results(
    transfers: list[TransferRow], variants: list[str], seeds: list[int]
) -> list[ClassResult]:
    """Per variant and measured class: completed downloads and mean download
    rate per run, as the mean over seeds with a 95% t CI. A seed whose run
    has no transfers of the class is left out."""
    per_run = _per_run(transfers)
    results = []
    for variant in variants:
        classes = sorted({cls for (v, cls, _) in per_run if v == variant})
        for cls in classes:
            counts, rates, failed, used = [], [], 0, 0
            for seed in seeds:
                rows = per_run.get((variant, cls, seed))
                if not rows:
                    continue
                used += 1
                counts.append(float(len(_completed_rates(rows))))
                rates.append(_mean_rate(rows))
                failed += sum(not r.success for r in rows)
            results.append(
                ClassResult(variant, cls, level_ci(counts), level_ci(rates), failed, used)
            )
    return results


@dataclass(frozen=True)
class RateRatio:
    """Under one variant, its web class's mean download rate over its bulk
    class's (as ClassResult's rates), per seed, and over the seeds."""

    variant: str
    web: str | None  # the variant's one web class; None if it has none or several
    bulk: str | None  # likewise its bulk class
    # The geometric mean of the per-seed ratios with a 95% t interval over
    # their logs; NaN where the variant has no such pair.
    ratio: Estimate
    seeds: int  # the seeds where both classes completed a download


def rate_ratios(
    transfers: list[TransferRow],
    variants: list[str],
    seeds: list[int],
    models: dict[str, str],
) -> list[RateRatio]:
    """Per variant, the web / bulk mean-rate ratio (B8's measure of how
    evenly capacity is shared): the ratio of the two classes' mean rates
    in each seed, then their geometric mean over the seeds where both
    completed a download. ``models``: each client class's workload model;
    a variant's measured classes of model web and bulk are the pair, and a
    variant without exactly one of each has no ratio. The geometric mean,
    because a ratio and its inverse are the same imbalance: 2 on one seed
    and 0.5 on another average to 1, not 1.25."""
    per_run = _per_run(transfers)
    results = []
    for variant in variants:
        web, bulk = web_and_bulk({cls for (v, cls, _) in per_run if v == variant}, models)
        if web is None or bulk is None:
            results.append(
                RateRatio(variant, None, None, Estimate(math.nan, None, None, 0, False), 0)
            )
            continue
        ratios = []
        for seed in seeds:
            top = _mean_rate(per_run.get((variant, web, seed), []))
            bottom = _mean_rate(per_run.get((variant, bulk, seed), []))
            if top > 0 and bottom > 0:  # both completed a download (NaN compares false)
                ratios.append(top / bottom)
        estimate = ratio_ci(ratios)
        results.append(RateRatio(variant, web, bulk, estimate, estimate.n))
    return results


def web_and_bulk(classes: set[str], models: dict[str, str]) -> tuple[str | None, str | None]:
    """Among ``classes``, the one whose workload model (``models``) is web
    and the one whose model is bulk; None for either where there is not
    exactly one."""
    web = [c for c in classes if models.get(c) == "web"]
    bulk = [c for c in classes if models.get(c) == "bulk"]
    return (web[0] if len(web) == 1 else None, bulk[0] if len(bulk) == 1 else None)


@dataclass(frozen=True)
class MechanismTotals(HopFeedbackTotals):
    """A variant's hop feedback totals, summed over its runs' tors."""

    variant: str
    runs: int


def mechanism_totals(rows: list[HopFeedbackRow], variants: list[str]) -> list[MechanismTotals]:
    """One line per variant, zeros where no tor logged hop feedback."""
    result = []
    for variant in variants:
        mine = [r for r in rows if r.variant == variant]
        total = summed(mine)
        runs = len({r.seed for r in mine})
        result.append(MechanismTotals(**asdict(total), variant=variant, runs=runs))
    return result


def mechanism_failures(
    rows: list[HopFeedbackRow], variants: Sequence[Variant], complete_runs: set[tuple[str, int]]
) -> list[Failure]:
    """Hop feedback must be at work in every complete run of a variant that
    switches it on (cells reached the sending ends and window decisions used
    them), and absent from every other run."""
    by_run: dict[tuple[str, int], list[HopFeedbackRow]] = defaultdict(list)
    for r in rows:
        by_run[(r.variant, r.seed)].append(r)
    runs = {key: summed(mine) for key, mine in by_run.items()}

    def idle(run: HopFeedbackTotals | None) -> str | None:
        delivered, used = (run.delivered, run.with_feedback) if run else (0, 0)
        if delivered and used:
            return None
        return (
            f"hop feedback on, but {delivered} cells reached a sending end and {used} "
            "window decisions used one"
        )

    def present(run: HopFeedbackTotals | None) -> str | None:
        if not run or not run.originated:
            return None
        return f"hop feedback off, but {run.originated} feedback cells were sent"

    return on_off_failures(
        "hop-feedback",
        variants,
        complete_runs,
        runs,
        lambda v: window_of(v) in (MARUT, MARUT_REMOTE),
        idle,
        present,
    )


@dataclass(frozen=True)
class ConnectionSharing:
    """One run's circuit placements (tor-patches/0003's log, MCTorConnections
    set): how many circuits this tor had on each connection to the peer."""

    variant: str
    seed: int
    placements: int
    shared: int  # placements made while a connection to that peer carried two or more
    most: int  # the most of a tor's circuits on one connection at any placement


def connection_sharing(placements: list[PlacementRow]) -> list[ConnectionSharing]:
    """Per run, from every tor's placement lines."""
    runs: dict[tuple[str, int], list[PlacementRow]] = defaultdict(list)
    for p in placements:
        runs[(p.variant, p.seed)].append(p)
    return [
        ConnectionSharing(
            variant,
            seed,
            len(rows),
            sum(max(p.circuits, default=0) > 1 for p in rows),
            max((max(p.circuits, default=0) for p in rows), default=0),
        )
        for (variant, seed), rows in sorted(runs.items())
    ]


def pctcp_failures(
    sharing: list[ConnectionSharing],
    variants: Sequence[Variant],
    complete_runs: set[tuple[str, int]],
) -> list[Failure]:
    """PCTCP must be at work in every complete run that switches it on (no
    connection ever carried two of a tor's circuits) and absent from every
    other run that logs placements (some connection carried several)."""

    def idle(run: ConnectionSharing | None) -> str | None:
        if run is None or run.placements == 0:
            return "PCTCP on, no placement logged"
        if run.shared:
            return (
                f"PCTCP on, but {run.shared} of {run.placements} placements found a "
                f"connection carrying {run.most} circuits"
            )
        return None

    def present(run: ConnectionSharing | None) -> str | None:
        if run is not None and run.placements and not run.shared:
            return "PCTCP off, but no connection ever carried two circuits"
        return None

    runs = {(s.variant, s.seed): s for s in sharing}
    return on_off_failures("pctcp", variants, complete_runs, runs, is_pctcp, idle, present)


@dataclass(frozen=True)
class N23Run(N23Totals):
    """One run's N23 totals, summed over its tors."""

    variant: str
    seed: int
    tors: int  # tors that logged totals


def n23_runs(rows: list[N23Row]) -> list[N23Run]:
    return _runs(rows, N23Totals, N23Run)


def n23_failures(
    runs: list[N23Run], variants: Sequence[Variant], complete_runs: set[tuple[str, int]]
) -> list[Failure]:
    """N23 must be at work in every complete run of a variant that switches it
    on (credit cells returned and taken, so hops waited on their next hop's
    credit) and absent from every other run (no credit cell sent)."""

    def idle(run: N23Run | None) -> str | None:
        sent, received = (run.credit_sent, run.credit_received) if run else (0, 0)
        if sent and received:
            return None
        return f"N23 on, but {sent} credit cells were sent and {received} taken"

    def present(run: N23Run | None) -> str | None:
        if run and run.credit_sent:
            return f"N23 off, but {run.credit_sent} credit cells were sent"
        return None

    by_run = {(r.variant, r.seed): r for r in runs}
    return on_off_failures("n23", variants, complete_runs, by_run, is_n23, idle, present)


@dataclass(frozen=True)
class HopWindowRun(HopWindowTotals):
    """One run's hop window totals, summed over its tors."""

    variant: str
    seed: int
    tors: int  # tors that logged totals


def hop_window_runs(rows: list[HopWindowRow]) -> list[HopWindowRun]:
    return _runs(rows, HopWindowTotals, HopWindowRun)


def _runs(rows: Sequence[Any], totals: type, run: Callable[..., R]) -> list[R]:
    """Per run, the ``totals`` fields of its tors' rows summed."""
    by_run: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for row in rows:
        by_run[(row.variant, row.seed)].append(row)
    counts = [f.name for f in fields(totals)]
    return [
        run(
            **{name: sum(getattr(r, name) for r in mine) for name in counts},
            variant=variant,
            seed=seed,
            tors=len(mine),
        )
        for (variant, seed), mine in sorted(by_run.items())
    ]


def hop_window_failures(
    runs: list[HopWindowRun], variants: Sequence[Variant], complete_runs: set[tuple[str, int]]
) -> list[Failure]:
    """Hop windows must be at work in every complete run of a variant that
    switches them on (feedback on forwarded cells reached previous hops and
    windows were decided from them) and absent from every other run (no
    report sent)."""

    def idle(run: HopWindowRun | None) -> str | None:
        received, decisions = (run.feedback_received, run.decisions) if run else (0, 0)
        if received and decisions:
            return None
        return (
            f"hop window on, but {received} feedback entries were taken and "
            f"{decisions} windows decided"
        )

    def present(run: HopWindowRun | None) -> str | None:
        if run and run.feedback_sent:
            return f"hop window off, but {run.feedback_sent} feedback entries were sent"
        return None

    by_run = {(r.variant, r.seed): r for r in runs}
    return on_off_failures(
        "hop-window",
        variants,
        complete_runs,
        by_run,
        lambda v: hop_window_of(v) is not None,
        idle,
        present,
    )
