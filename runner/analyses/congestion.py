"""Congestion-control comparisons (experiments.md, section 4): which window
and transport each variant runs, downloads completed and download rates
per class with CIs across seeds, and each mechanism's own counters per
variant: hop feedback's totals, PCTCP's connections per circuit."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from runner.logs.hop_feedback import HopFeedbackTotals, summed
from runner.report.stats import Estimate, level_ci
from runner.spec.model import Variant
from runner.tables.rows import HopFeedbackRow, PlacementRow, TransferRow

FIXED, VEGAS, MARUT = "fixed window", "Vegas", "Vegas + hop feedback"
PCTCP_OPTION = "MCTorPerCircuit 1"  # tor-patches/0003's per-circuit connections


def window_of(variant: Variant) -> str:
    """The congestion control a variant's consensus selects: cc_alg=0 is the
    fixed window, cc_alg=2 Vegas, with cc_hop_feedback=1 Marut's feedback."""
    if variant.consensus.get("cc_alg") == 0:
        return FIXED
    if variant.consensus.get("cc_hop_feedback") == 1:
        return MARUT
    return VEGAS


def is_pctcp(variant: Variant) -> bool:
    """PCTCP: every circuit on a connection of its own (tor-patches/0003)."""
    return any(PCTCP_OPTION in lines for lines in variant.torrc.values())


def mechanism_of(variant: Variant) -> str:
    """The window, and the transport where it is PCTCP's."""
    return window_of(variant) + (" + PCTCP" if is_pctcp(variant) else "")


def scenario_of(variant: Variant) -> str:
    """The network scenario a variant runs: its name without the trailing
    word that names its mechanism (``tree-marut`` -> ``tree``)."""
    head, _, tail = variant.name.rpartition("-")
    return head if head and tail in ("fixed", "vegas", "marut", "pctcp") else variant.name


def is_congestion_experiment(variants: Sequence[Variant]) -> bool:
    return any("cc_hop_feedback" in v.consensus for v in variants)


@dataclass(frozen=True)
class ClassResult:
    """One class of clients under one variant, over seeds."""

    variant: str
    cls: str
    completed: Estimate  # downloads completed per run
    rate_mbit: Estimate  # mean over a run's completed downloads of size / TTLB
    failed: int  # over all runs
    seeds: int


def class_results(
    transfers: list[TransferRow], variants: list[str], seeds: list[int]
) -> list[ClassResult]:
    """Per variant and measured class: completed downloads and mean download
    rate per run, as the mean over seeds with a 95% t CI. A seed whose run
    has no transfers of the class is left out."""
    per_run: dict[tuple[str, str, int], list[TransferRow]] = defaultdict(list)
    for row in transfers:
        if row.measured:
            per_run[(row.variant, row.cls, row.seed)].append(row)
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
                ok = [r.goodput_mbit for r in rows if r.goodput_mbit is not None]
                counts.append(float(len(ok)))
                rates.append(sum(ok) / len(ok) if ok else float("nan"))
                failed += sum(not r.success for r in rows)
            results.append(
                ClassResult(variant, cls, level_ci(counts), level_ci(rates), failed, used)
            )
    return results


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
) -> list[str]:
    """Hop feedback must be at work in every complete run of a variant that
    switches it on (cells reached the sending ends and window decisions used
    them), and absent from every other run."""
    failures = []
    for variant in variants:
        for seed in sorted(s for v, s in complete_runs if v == variant.name):
            mine = [r for r in rows if r.variant == variant.name and r.seed == seed]
            delivered = sum(r.delivered for r in mine)
            used = sum(r.with_feedback for r in mine)
            originated = sum(r.originated for r in mine)
            if window_of(variant) == MARUT and (delivered == 0 or used == 0):
                failures.append(
                    f"{variant.name}/seed-{seed}: hop feedback on, but {delivered} cells "
                    f"reached a sending end and {used} window decisions used one"
                )
            if window_of(variant) != MARUT and originated:
                failures.append(
                    f"{variant.name}/seed-{seed}: hop feedback off, but {originated} "
                    "feedback cells were sent"
                )
    return failures


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
) -> list[str]:
    """PCTCP must be at work in every complete run that switches it on (no
    connection ever carried two of a tor's circuits) and absent from every
    other run that logs placements (some connection carried several)."""
    by_run = {(s.variant, s.seed): s for s in sharing}
    failures = []
    for variant in variants:
        for seed in sorted(s for v, s in complete_runs if v == variant.name):
            run = by_run.get((variant.name, seed))
            if is_pctcp(variant):
                if run is None or run.placements == 0:
                    failures.append(f"{variant.name}/seed-{seed}: PCTCP on, no placement logged")
                elif run.shared:
                    failures.append(
                        f"{variant.name}/seed-{seed}: PCTCP on, but {run.shared} of "
                        f"{run.placements} placements found a connection carrying "
                        f"{run.most} circuits"
                    )
            elif run is not None and run.placements and not run.shared:
                failures.append(
                    f"{variant.name}/seed-{seed}: PCTCP off, but no connection ever "
                    "carried two circuits"
                )
    return failures
