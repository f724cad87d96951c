"""The report's check that each variant links the conflux legs it expects
(runner.experiments.conflux.legs), and its table per measured client."""

from __future__ import annotations

from pathlib import Path

from runner.experiments.conflux.legs import conflux_leg_checks
from runner.report.base import ReportInput, Section
from runner.report.markdown import table
from runner.tables.schema import RELAYS


def consensus_flags(relays_csv: Path) -> dict[tuple[str, int], list[tuple[str, set[str]]]]:
    """(variant, seed) -> each relay's role and flags in the run's last consensus."""
    found: dict[tuple[str, int], list[tuple[str, set[str]]]] = {}
    for r in RELAYS.read_if_present(relays_csv):
        found.setdefault((r.variant, r.seed), []).append((r.role, set(r.flags)))
    return found


def flag_cause(relays: list[tuple[str, set[str]]]) -> str:
    """Why a client may have linked too few legs: relays the consensus left
    without Fast or Stable, which a Conflux leg needs (each leg its own
    guard and middle, all legs one exit)."""
    if not relays:
        return ""
    exits = [flags for role, flags in relays if "Exit" in flags]
    usable_exits = sum({"Fast", "Stable"} <= flags for flags in exits)
    others = [flags for role, flags in relays if role != "authority"]
    stable = sum("Stable" in flags for flags in others)
    if usable_exits == len(exits) and stable == len(others):
        return ""
    return (
        f" (the run's consensus had {usable_exits} of {len(exits)} exits Fast and Stable, "
        f"{stable} of {len(others)} relays Stable: a network too small for Conflux's legs "
        "when relays lack those flags; more relays per role, or a run again, give it room)"
    )


def conflux_legs_section(inp: ReportInput) -> Section:
    spec = inp.spec
    leg_checks = conflux_leg_checks(
        inp.circuits,
        inp.measured_clients,
        {v.name: v.expect["conflux_legs"] for v in spec.variants if "conflux_legs" in v.expect},
    )
    if not leg_checks:
        return Section()
    flags = consensus_flags(inp.layout.relays_csv)
    failures = [
        f"{c.variant}/seed-{c.seed} {c.host}: conflux sets by legs {c.sets_by_legs or '{}'}, "
        f"expected {'none' if c.expected == 0 else f'only {c.expected}-leg sets'}"
        + flag_cause(flags.get((c.variant, c.seed), []))
        for c in leg_checks
        if not c.ok
    ]
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
    return Section(notes, failures, lines)
