"""The report's check that each variant links the conflux legs it expects
(runner.experiments.conflux.conflux_legs), and its table per measured client."""

from __future__ import annotations

from pathlib import Path

from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.experiments.conflux.conflux_legs import LegsResult
from runner.report.markdown import table


def conflux_legs_section(result: LegsResult, inp: Inputs, out: Path) -> Section:
    leg_checks = result.checks
    if not leg_checks:
        return Section()
    passed_legs = sum(c.ok for c in leg_checks)
    notes = [
        "",
        "Conflux must be active as each variant expects (only sets of the expected "
        f"number of legs; none where that is 0): {passed_legs}/{len(leg_checks)} "
        "client-runs pass.",
    ]
    lines = [
        "",
        "## Conflux legs per client",
        "",
        "Sets each measured client linked in each run, by number of legs, against what "
        "the variant expects.",
        "",
    ]
    lines += table(
        ["variant", "seed", "client", "expected legs", "sets linked", "sets by legs", "check"],
        [
            [
                c.variant,
                str(c.seed),
                c.host,
                str(c.expected),
                str(c.sets),
                ", ".join(f"{n} legs: {k}" for n, k in sorted(c.sets_by_legs.items())) or "–",
                "ok" if c.ok else "FAILED",
            ]
            for c in leg_checks
        ],
    )
    return Section(notes, lines)
