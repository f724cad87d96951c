"""The report's path section: each variant's circuits and bytes per relay
position, and the runs whose traffic avoids a position its reference uses."""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.analyses.paths import MIN_REFERENCE_SHARE, PathsResult
from runner.report.markdown import table
from runner.spec.model import LOAD_ROLES


def paths_section(result: PathsResult, inp: Inputs, out: Path) -> Section:
    section = Section()
    if not result.shares:
        return section
    section.checks.append(
        "Paths: in every run, each variant's share of measured circuits and of relay bytes "
        f"through each relay position is at least {result.tolerance:.0%} of its reference's "
        f"on the same seed (positions carrying at least {MIN_REFERENCE_SHARE:.0%} of the "
        "reference's)."
    )
    by_key: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    seeds: dict[tuple[str, str], set[int]] = defaultdict(set)
    for s in result.shares:
        by_key[(s.variant, s.measure, s.position)].append(s.share)
        seeds[(s.variant, s.measure)].add(s.seed)
    positions = [p for p in LOAD_ROLES if any(k[2] == p for k in by_key)]
    rows = []
    for variant in inp.variants:
        for measure in ("circuits", "bytes"):
            if (variant, measure) not in seeds:
                continue
            cells = [
                f"{statistics.fmean(by_key[(variant, measure, p)]):.1%}"
                if (variant, measure, p) in by_key
                else "-"
                for p in positions
            ]
            rows.append([variant, measure, *cells, str(len(seeds[(variant, measure)]))])
    section.lines += [
        "",
        "## Paths",
        "",
        "Per variant, the mean over seeds of the share of its measured clients' circuits "
        "(those that carried a stream) with a hop through a relay of each role, and of "
        "the bytes every relay read over the measured period that relays of each role "
        "read. A column is the relays' role in the network, not the hop they served: every "
        "circuit has a middle hop, but guard and exit relays serve as middles too, so the "
        "*middle relays* share of circuits can be well under 100%. A comparison holds its "
        "network fixed: a variant that avoids a position its reference uses fails the check "
        "above.",
        "",
    ]
    columns = [f"{p} relays" for p in positions]
    section.lines += table(["variant", "measure", *columns, "seeds"], rows)
    return section
