"""Conflux legs: which conflux sets each measured client linked, against the
number of legs its variant expects."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from runner.analyses.inputs import Inputs
from runner.checks import Failure
from runner.layout import Layout
from runner.tables.schema import RELAYS, CircuitRow


@dataclass(frozen=True)
class LegCheck:
    """Conflux sets one measured client linked in one run, against the variant's
    expected number of legs (0: conflux must not be used)."""

    variant: str
    seed: int
    host: str
    expected: int
    sets_by_legs: dict[int, int]  # legs -> number of sets

    @property
    def sets(self) -> int:
        return sum(self.sets_by_legs.values())

    @property
    def ok(self) -> bool:
        if self.expected == 0:
            return self.sets == 0
        return self.sets > 0 and set(self.sets_by_legs) == {self.expected}


def conflux_leg_checks(
    circuits: Iterable[CircuitRow],
    measured_clients: dict[tuple[str, int], list[tuple[str, str]]],
    expected_legs: dict[str, int],
) -> list[LegCheck]:
    """One check per measured client and run of each variant that expects a
    number of conflux legs; legs are the circuits linked under one CONFLUX_ID."""
    legs: dict[tuple[str, int, str, str], set[str]] = defaultdict(set)
    for c in circuits:
        if c.conflux_id:
            legs[(c.variant, c.seed, c.host, c.conflux_id)].add(c.circuit_id)
    checks = []
    for (variant, seed), clients in sorted(measured_clients.items()):
        if variant not in expected_legs:
            continue
        for host, _ in clients:
            by_legs: dict[int, int] = defaultdict(int)
            for (v, s, h, _), members in legs.items():
                if (v, s, h) == (variant, seed, host):
                    by_legs[len(members)] += 1
            checks.append(LegCheck(variant, seed, host, expected_legs[variant], dict(by_legs)))
    return checks


def consensus_flags(layout: Layout) -> dict[tuple[str, int], list[tuple[str, set[str]]]]:
    """(variant, seed) -> each relay's role and flags in the run's last consensus."""
    found: dict[tuple[str, int], list[tuple[str, set[str]]]] = {}
    for r in RELAYS.read_from(layout):
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


@dataclass(frozen=True)
class LegsResult:
    checks: list[LegCheck]
    failures: list[Failure]


def legs_result(inp: Inputs) -> LegsResult:
    spec = inp.spec
    leg_checks = conflux_leg_checks(
        inp.circuits,
        inp.measured_clients,
        {v.name: v.expect["conflux_legs"] for v in spec.variants if "conflux_legs" in v.expect},
    )
    if not leg_checks:
        return LegsResult([], [])
    flags = consensus_flags(inp.layout)
    failures = [leg_failure(c, flags.get((c.variant, c.seed), [])) for c in leg_checks if not c.ok]
    return LegsResult(leg_checks, failures)


def leg_failure(check: LegCheck, flags: list[tuple[str, set[str]]]) -> Failure:
    """A client's failed leg check, with what its run's consensus says of the cause."""
    expected = "none" if check.expected == 0 else f"only {check.expected}-leg sets"
    return Failure(
        check.variant,
        check.seed,
        "conflux-legs",
        f"conflux sets by legs {check.sets_by_legs or '{}'}, expected {expected}"
        + flag_cause(flags),
        check.host,
    )
