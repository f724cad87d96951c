"""The report's circuits section: circuits built and failed per variant, and
the multipath sets they linked (runner.experiments.conflux.circuits)."""

from __future__ import annotations

from pathlib import Path

from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.experiments.conflux.circuits import CircuitSummary
from runner.report.markdown import seconds, table


def circuits_section(result: list[CircuitSummary], inp: Inputs, out: Path) -> Section:
    lines = [
        "",
        "## Circuits",
        "",
        "Clients' circuits from oniontrace CIRC events, without "
        "onion-service (HS_*) circuits; a conflux set is the legs linked under one "
        "CONFLUX_ID.",
        "",
    ]
    lines += table(
        [
            "variant",
            "built",
            "failed",
            "build time median (s)",
            "conflux sets linked",
            "sets by number of legs",
        ],
        [
            [
                s.variant,
                str(s.built),
                str(s.failed),
                seconds(s.build_median),
                str(s.sets),
                ", ".join(f"{n} legs: {k}" for n, k in sorted(s.sets_by_legs.items())) or "–",
            ]
            for s in result
        ],
    )
    return Section(lines=lines)
