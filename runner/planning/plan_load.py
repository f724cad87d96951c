"""A network's load as `runner plan` reads and predicts it: the busiest
dedicated relay of a pilot's runs, per position, and what a larger design
offers each position (its client groups' traffic over the position's
capacity)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from runner.spec.model import RELAY_ROLES, Spec
from runner.tables.schema import RelayLoad, TransferRow


def busiest_utilisation(loads: Sequence[RelayLoad]) -> float | None:
    """The mean over runs of the busiest dedicated relay's mean utilisation.
    Client relays are left out: their load figure counts their own user's
    downloads with what they relay, so it can pass 100% on an idle network."""
    busiest: dict[tuple[str, int], float] = {}
    for r in loads:
        if r.role not in RELAY_ROLES:
            continue
        key = (r.variant, r.seed)
        busiest[key] = max(busiest.get(key, 0.0), r.mean)
    return float(np.mean(list(busiest.values()))) if busiest else None


def busiest_by_role(loads: Sequence[RelayLoad]) -> dict[str, float]:
    """Per dedicated relay role, the mean over runs of that role's busiest
    relay's mean utilisation."""
    most: dict[tuple[str, int, str], float] = {}
    for r in loads:
        if r.role in RELAY_ROLES:
            key = (r.variant, r.seed, r.role)
            most[key] = max(most.get(key, 0.0), r.mean)
    by_role: dict[str, list[float]] = {}
    for (_, _, role), value in most.items():
        by_role.setdefault(role, []).append(value)
    return {role: float(np.mean(values)) for role, values in by_role.items()}


def role_capacity(spec: Spec) -> dict[str, float]:
    """Per relay role, the expected capacity of ``spec``'s relays in bits/s
    (a group's bandwidth is drawn log-uniformly from its range, but for the
    relays it gives a bandwidth of their own); roles with a group drawn from
    a dataset are left out (their capacity is not in the spec)."""
    capacity: dict[str, float] = {}
    drawn = set()
    for g in spec.network.relays:
        if g.sample is not None:
            drawn.add(g.role)
            continue
        low, high = g.bandwidth
        mean = low if high == low else (high - low) / math.log(high / low)
        fixed = g.bandwidth_of.values()
        total = (g.count - len(fixed)) * mean + sum(fixed)
        capacity[g.role] = capacity.get(g.role, 0.0) + total
    return {role: c for role, c in capacity.items() if role not in drawn}


def class_demand(pilot: Spec, target: Spec, transfers: Sequence[TransferRow]) -> float | None:
    """Times the pilot's traffic that ``target``'s clients offer: each client
    group's bytes in the pilot, times how many more clients the group has
    in ``target`` (matched by name). Bulk clients take what the path gives,
    so this is a rough guide to load, not a prediction of it."""
    moved: dict[str, float] = {}
    for t in transfers:
        if t.success:
            moved[t.cls] = moved.get(t.cls, 0.0) + t.size
    total = sum(moved.values())
    if not total:
        return None
    pilot_counts = {g.name: g.count for g in pilot.network.clients}
    counts = {g.name: g.count for g in target.network.clients}
    return (
        sum(
            b * counts.get(cls, 0) / pilot_counts[cls]
            for cls, b in moved.items()
            if pilot_counts.get(cls)
        )
        / total
    )
