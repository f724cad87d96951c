"""A spec's ``seeds:``: a list of seeds, or rounds of seeds run until the
hypotheses are decisive (``{min, max, step, later}``)."""

from __future__ import annotations

from typing import Any

from runner.params import Param, Where
from runner.spec.keys import mapping_of, simple_values
from runner.spec.model import LATER_ROUNDS, SeedRounds


def parse_seeds(value: Any, where: Where) -> tuple[tuple[int, ...], SeedRounds | None]:
    """A list of seeds, or {min, max, step, later, first, decide_from, skew}: seeds
    first..first + min - 1 first, more in rounds."""
    if isinstance(value, dict):
        rounds = _seed_rounds(value, where)
        return tuple(range(rounds.first, rounds.first + rounds.min)), rounds
    seeds = Param("list:int", minimum=0).convert(value, where)
    if len(set(seeds)) != len(seeds):
        raise where.error("seeds must be distinct")
    return tuple(seeds), None


def _seed_rounds(value: dict[str, Any], where: Where) -> SeedRounds:
    body = mapping_of(SeedRounds, value, where)
    simple = simple_values(SeedRounds, body, where)  # min and step
    high = Param("int", minimum=simple["min"]).convert(body["max"], where.child("max"))
    later = body.get("later", "all")
    if later not in LATER_ROUNDS:
        raise where.child("later").error(
            f"expected one of {', '.join(LATER_ROUNDS)} (what the rounds after the "
            f"first run), got {later!r}"
        )
    return SeedRounds(**simple, max=high, later=later)
