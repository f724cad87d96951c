"""How the last consensus of each run saw the relays."""

from __future__ import annotations

from dataclasses import dataclass

from runner.analyses.inputs import Inputs
from runner.tables.schema import RELAYS


@dataclass(frozen=True)
class ConsensusSummary:
    variant: str
    seed: int
    relays: int
    exits: int
    exits_fast_stable: int
    guards: int
    stable: int
    measured: int  # relays whose weight came from the bandwidth file


def consensus_summaries(inp: Inputs) -> list[ConsensusSummary]:
    """Per variant and seed, from relays.csv (none where it is missing)."""
    rows = RELAYS.read_from(inp.layout)
    found = []
    for variant in inp.variants:
        for seed in sorted({r.seed for r in rows}):
            mine = [r for r in rows if r.variant == variant and r.seed == seed]
            if not mine:
                continue
            flags = [set(r.flags) for r in mine]
            exits = [f for f in flags if "Exit" in f]
            found.append(
                ConsensusSummary(
                    variant,
                    seed,
                    len(mine),
                    len(exits),
                    sum({"Fast", "Stable"} <= f for f in exits),
                    sum("Guard" in f for f in flags),
                    sum("Stable" in f for f in flags),
                    sum(r.measured for r in mine),
                )
            )
    return found
