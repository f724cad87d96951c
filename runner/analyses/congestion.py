"""Congestion-control comparisons (experiments.md, section 4): which window
each variant runs, downloads completed and download rates per class with
CIs across seeds, and the hop feedback mechanism's totals per variant."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from runner.logs.hop_feedback import HopFeedbackTotals, summed
from runner.report.stats import Estimate, level_ci
from runner.spec.model import Variant
from runner.tables.rows import HopFeedbackRow, TransferRow

FIXED, VEGAS, MARUT = "fixed window", "Vegas", "Vegas + hop feedback"


def window_of(variant: Variant) -> str:
    """The congestion control a variant's consensus selects: cc_alg=0 is the
    fixed window, cc_alg=2 Vegas, with cc_hop_feedback=1 Marut's feedback."""
    if variant.consensus.get("cc_alg") == 0:
        return FIXED
    if variant.consensus.get("cc_hop_feedback") == 1:
        return MARUT
    return VEGAS


def scenario_of(variant: Variant) -> str:
    """The network scenario a variant runs: its name without the trailing
    word that names its window (``tree-marut`` -> ``tree``)."""
    head, _, tail = variant.name.rpartition("-")
    return head if head and tail in ("fixed", "vegas", "marut") else variant.name


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
