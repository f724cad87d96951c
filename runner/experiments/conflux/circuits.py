"""Clients' circuits per variant: built and failed, their build time, and
the multipath sets they linked."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from runner.analyses.inputs import Inputs


@dataclass(frozen=True)
class CircuitSummary:
    variant: str
    built: int
    failed: int
    build_median: float  # seconds; nan if none was built
    sets: int  # linked sets (circuits sharing a CONFLUX_ID)
    sets_by_legs: dict[int, int]  # legs -> sets


def circuit_summaries(inp: Inputs) -> list[CircuitSummary]:
    """Per variant. Onion-service circuits (purpose HS_*) are left out: tor
    builds and closes them on its own (vanguards), and none of the measured
    traffic uses them."""
    found = []
    for variant in inp.variants:
        mine = [c for c in inp.circuits if c.variant == variant and not c.purpose.startswith("HS_")]
        built = [c for c in mine if c.status == "BUILT"]
        builds = sorted(c.build for c in built if c.build is not None)
        median = builds[len(builds) // 2] if builds else math.nan
        legs: dict[tuple[int, str, str], set[str]] = defaultdict(set)
        for c in mine:
            if c.conflux_id:
                legs[(c.seed, c.host, c.conflux_id)].add(c.circuit_id)
        by_size: dict[int, int] = defaultdict(int)
        for members in legs.values():
            by_size[len(members)] += 1
        found.append(
            CircuitSummary(
                variant, len(built), len(mine) - len(built), median, len(legs), dict(by_size)
            )
        )
    return found
