"""The report's pinned-path section: per pinned variant, the measured
clients' circuits on and off the relays they were held to, and their
multipath sets."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.analyses.pinned import PinnedResult, PinnedRun
from runner.report.markdown import table


def pinned_section(result: PinnedResult, inp: Inputs, out: Path) -> Section:
    section = Section()
    if result.unchecked:
        section.lines += ["", "## Pinned paths", "", f"Not checked here: {result.unchecked}."]
        return section
    if not result.runs:
        return section
    section.checks.append(
        "Pinned paths: in every run of a variant with `pinned_path`, each measured client's "
        "circuits ran on the guards, middles and exit it was held to (one draw per seed and "
        "client, the same in every variant), and no multipath set's legs shared a guard or "
        "middle."
    )
    per: dict[str, list[PinnedRun]] = defaultdict(list)
    for run in result.runs:
        per[run.variant].append(run)
    rows = []
    for variant, runs in per.items():
        sets = sum(r.sets for r in runs)
        first = f"{sum(r.first_path_sets for r in runs)} of {sets}" if sets else "-"
        rows.append(
            [
                variant,
                str(len({r.seed for r in runs})),
                str(sum(r.circuits for r in runs)),
                str(sum(r.off_path for r in runs)),
                str(sets),
                str(sum(r.shared_relay_sets for r in runs)),
                first,
            ]
        )
    section.lines += [
        "",
        "## Pinned paths",
        "",
        "Per pinned variant over its runs: the measured clients' three-hop circuits that "
        "carried a stream or joined a multipath set, those on relays the client was not held "
        "to, the sets, those whose legs share a guard or middle, and the sets with a leg on "
        "the draw's first guard and middle (plain Tor's path when plain pins one leg; which "
        "leg tor builds there is tor's guard order, not the draw's).",
        "",
        *table(
            [
                "variant",
                "seeds",
                "circuits",
                "off the pin",
                "sets",
                "legs sharing",
                "on plain's path",
            ],
            rows,
        ),
    ]
    return section
