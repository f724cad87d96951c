"""Draw a small network's relays from a measured population, keeping its shape.

As tornettools scales the live network down: the population's relays of each
role are sorted by bandwidth and cut into as many bins of (nearly) equal size
as relays are wanted of that role, and one relay is taken from each bin. A
network of N relays so keeps the population's bandwidth distribution and its
Exit/Guard shares. tornettools takes each bin's median relay; here each seed
takes a random relay of each bin, so seeds are different networks of the
same shape.
"""

from __future__ import annotations

import math
import random

from runner.datasets import MeasuredRelay, relay_population
from runner.errors import DataError
from runner.spec.model import ANY_ROLE, RELAY_ROLES, RelayGroup


def split_by_shares(count: int, shares: list[float], least: int = 0) -> list[int]:
    """``count`` split by ``shares`` in whole numbers (largest remainders);
    then parts below ``least`` are raised to it, taken from the largest."""
    total = sum(shares)
    exact = [count * s / total for s in shares]
    parts = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(shares)), key=lambda i: exact[i] - parts[i], reverse=True)
    for i in by_remainder[: count - sum(parts)]:
        parts[i] += 1
    for i in range(len(parts)):
        while parts[i] < least:
            largest = max(range(len(parts)), key=lambda j: parts[j])
            parts[largest] -= 1
            parts[i] += 1
    return parts


def role_counts(group: RelayGroup) -> dict[str, int]:
    """How many relays of each role the group draws: its own role, or, for
    a group of any role, the population's role shares (at least one each)."""
    if group.role != ANY_ROLE:
        return {group.role: group.count}
    assert group.sample is not None
    population = relay_population(group.sample)
    shares = [float(sum(r.role == role for r in population)) for role in RELAY_ROLES]
    return dict(zip(RELAY_ROLES, split_by_shares(group.count, shares, least=1), strict=True))


def bins(relays: list[MeasuredRelay], count: int) -> list[list[MeasuredRelay]]:
    """``relays`` sorted by capacity, cut into ``count`` bins whose sizes
    differ by at most one."""
    ordered = sorted(relays, key=lambda r: (r.capacity_bytes, r.row))
    size = len(ordered)
    return [ordered[i * size // count : (i + 1) * size // count] for i in range(count)]


def sample_relays(group: RelayGroup, rng: random.Random) -> list[MeasuredRelay]:
    """The relays ``group`` draws for one seed, by role, smallest first."""
    assert group.sample is not None
    population = relay_population(group.sample)
    chosen: list[MeasuredRelay] = []
    for role, count in role_counts(group).items():
        if count == 0:
            continue
        pool = [r for r in population if r.role == role]
        if len(pool) < count:
            raise DataError(
                f"relay population {group.sample} has {len(pool)} {role} relays; "
                f"the spec asks for {count}"
            )
        chosen += [rng.choice(b) for b in bins(pool, count)]
    return chosen
