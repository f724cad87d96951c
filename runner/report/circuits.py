"""The report's circuits section: circuits built and failed per variant, and
the conflux sets they linked."""

from __future__ import annotations

from collections import defaultdict

from runner.report.base import ReportInput, Section
from runner.report.markdown import seconds, table
from runner.tables.schema import CircuitRow


def circuit_summary(circuits: list[CircuitRow], variants: list[str]) -> list[list[str]]:
    """Per variant: circuits built and failed, build time, linked conflux sets.

    Onion-service circuits (purpose HS_*) are left out: tor builds and closes
    them on its own (vanguards), and none of the measured traffic uses them.
    """
    rows = []
    for variant in variants:
        mine = [c for c in circuits if c.variant == variant and not c.purpose.startswith("HS_")]
        built = [c for c in mine if c.status == "BUILT"]
        builds = sorted(c.build for c in built if c.build is not None)
        median = builds[len(builds) // 2] if builds else float("nan")
        legs: dict[tuple[int, str, str], set[str]] = defaultdict(set)
        for c in mine:
            if c.conflux_id:
                legs[(c.seed, c.host, c.conflux_id)].add(c.circuit_id)
        by_size: dict[int, int] = defaultdict(int)
        for members in legs.values():
            by_size[len(members)] += 1
        shape = ", ".join(f"{n} legs: {count}" for n, count in sorted(by_size.items())) or "–"
        rows.append(
            [
                variant,
                str(len(built)),
                str(len(mine) - len(built)),
                seconds(median),
                str(len(legs)),
                shape,
            ]
        )
    return rows


def circuits_section(inp: ReportInput) -> Section:
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
        circuit_summary(inp.circuits, inp.variants),
    )
    return Section(lines=lines)
