"""A spec's ``checks:``: what every run must show to count (completed
transfers, rounds, relay load) and the variants that must keep up with a
reference (runner.spec.keep_up)."""

from __future__ import annotations

from typing import Any

from runner.params import Param, Where
from runner.params import mapping_with_keys as _mapping
from runner.spec.keep_up import parse_keep_up
from runner.spec.keys import mapping_of, simple_values
from runner.spec.model import ALL_RELAYS, BUSIEST, RELAY_ROLES, Checks


def parse_checks(value: Any, where: Where, variants: list[str], classes: list[str]) -> Checks:
    """``variants``: the spec's variants' names; ``classes``: its measured client classes."""
    body = mapping_of(Checks, value or {}, where)
    return Checks(
        **simple_values(Checks, body, where),
        load=_load_ranges(body.get("load"), where.child("load")),
        load_variants=_load_variants(
            body.get("load_variants"), where.child("load_variants"), variants
        ),
        keep_up=parse_keep_up(body.get("keep_up"), where.child("keep_up"), variants, classes),
    )


def _load_ranges(value: Any, where: Where) -> dict[str, tuple[float, float]]:
    """checks.load: relay role (or "relays") -> [low, high] mean utilisation
    of those relays; "busiest <role>" -> the range for the busiest one."""
    if value is None:
        return {}
    roles = (ALL_RELAYS, *RELAY_ROLES)
    body = _mapping(value, where, (), (*roles, *(BUSIEST + r for r in roles)))
    ranges = {}
    for role, raw in body.items():
        w = where.child(role)
        pair = Param("list:share", minimum=0.0, maximum=1.0).convert(raw, w)
        if len(pair) != 2 or pair[0] > pair[1]:
            raise w.error("expected a range [low, high] of utilisation, e.g. [50%, 90%]")
        ranges[role] = (pair[0], pair[1])
    return ranges


def _load_variants(value: Any, where: Where, names: list[str]) -> tuple[str, ...]:
    """checks.load_variants: the variants the load check holds for."""
    if value is None:
        return ()
    chosen = Param("list:str").convert(value, where)
    if not chosen:
        raise where.error("expected a non-empty list of variants (or leave the key out)")
    for i, name in enumerate(chosen):
        if name not in names:
            raise where.child(i).error(f"expected one of the variants {names}, got {name!r}")
    return tuple(chosen)
