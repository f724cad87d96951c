"""The report's relay section: how the last consensus saw the relays."""

from __future__ import annotations

from pathlib import Path

from runner.report.base import ReportInput, Section
from runner.report.markdown import table
from runner.tables.schema import RELAYS


def relay_summary(relays_csv: Path, variants: list[str]) -> list[list[str]]:
    """Per variant and seed: how the last consensus saw the relays."""
    rows = RELAYS.read_if_present(relays_csv)
    table = []
    seeds = sorted({r.seed for r in rows})
    for variant in variants:
        for seed in seeds:
            mine = [r for r in rows if r.variant == variant and r.seed == seed]
            if not mine:
                continue
            flags = [set(r.flags) for r in mine]
            exits = [f for f in flags if "Exit" in f]
            table.append(
                [
                    variant,
                    str(seed),
                    str(len(mine)),
                    f"{sum({'Fast', 'Stable'} <= f for f in exits)}/{len(exits)}",
                    str(sum("Guard" in f for f in flags)),
                    str(sum("Stable" in f for f in flags)),
                    f"{sum(r.measured for r in mine)}/{len(mine)}",
                ]
            )
    return table


def relays_section(inp: ReportInput) -> Section:
    layout, variants = inp.layout, inp.variants
    lines: list[str] = []
    relay_table = relay_summary(layout.relays_csv, variants)
    if relay_table:
        lines += [
            "",
            "## Relays in the last consensus",
            "",
            "From the first authority's last consensus. Conflux legs need Fast and Stable "
            "relays; weights are measured (from the bandwidth file) only when at least three "
            "authorities vote them, else they are the relays' own reports.",
            "",
        ]
        lines += table(
            [
                "variant",
                "seed",
                "relays",
                "exits Fast+Stable",
                "Guard",
                "Stable",
                "measured weights",
            ],
            relay_table,
        )
    return Section(lines=lines)
