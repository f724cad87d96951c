"""Conflux legs: which conflux sets each measured client linked, against the
number of legs its variant expects."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from runner.tables.schema import CircuitRow


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
