"""The report's keep-up section (checks.keep_up): each variant against its
reference on every seed, the means over the seeds where an item is judged
on them, and what did not keep up."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.analyses.keep_up import KeepUpResult, KeepUpRun, shown
from runner.report.markdown import table
from runner.spec.keep_up import METRICS


def keep_up_section(result: KeepUpResult, inp: Inputs, out: Path) -> Section:
    items = inp.spec.checks.keep_up
    section = Section()
    if not items:
        return section
    judged = "; ".join(sorted({f"{i.requirement()} ({_judged(i.over_seeds)})" for i in items}))
    section.checks.append(
        "Keep up: each of these variants against the same seed's run of its reference, so "
        f"that a mechanism that starves the path fails: {judged}."
    )
    means = {(m.variant, m.reference, m.metric, m.group): m for m in result.means}
    per: dict[tuple[str, str, str, str | None], list[KeepUpRun]] = defaultdict(list)
    for run in result.runs:
        per[(run.variant, run.reference, run.metric, run.group)].append(run)
    rows = []
    for (variant, reference, metric, group), runs in per.items():
        what = "busiest relay" if metric == "busiest_relay" else f"{group} KiB/s"
        seeds = "; ".join(
            f"{r.seed}: {shown(r.metric, r.value).removesuffix(' KiB/s')} vs "
            f"{shown(r.metric, r.reference_value).removesuffix(' KiB/s')}"
            for r in runs
        )
        kept = f"{sum(r.passed for r in runs)} of {len(runs)}"
        mean = means.get((variant, reference, metric, group))
        if mean is not None:
            kept += (
                f"; means {shown(metric, mean.value)} vs {shown(metric, mean.reference_value)}: "
                + ("keeps up" if mean.passed else "falls short")
            )
        rows.append([variant, reference, what, seeds, kept])
    section.lines += [
        "",
        "## Keep up",
        "",
        "Each variant's run against its reference's on the same seed (seed: variant vs "
        "reference). "
        + " ".join(f"{m}: {what}." for m, what in METRICS.items())
        + " A run keeps up when its value is at least the reference's less the allowed "
        "points (busiest relay) or the allowed share of it (bandwidth); an item judged on "
        "the means over the seeds keeps up when the variant's mean does so against the "
        "reference's, and only then counts as a failure.",
        "",
        *table(["variant", "reference", "metric", "per seed", "seeds kept up"], rows),
    ]
    if result.missing:
        section.lines += [
            "",
            "Not checked (one of the two runs is missing): " + ", ".join(result.missing) + ".",
        ]
    return section


def _judged(over_seeds: bool) -> str:
    return "on the means over the seeds" if over_seeds else "on each seed, failing the run"
