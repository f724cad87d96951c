"""A variant's ``expect:``: what an experiment's checks expect of its runs
(``expect: {<key>: <integer>}``). The core knows no key: each experiment
declares its own (runner/experiments/<name>/), the registry hands them to
the spec loader, and an unknown key is an error naming the known ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from runner.params import Param, Where


@dataclass(frozen=True)
class ExpectKey:
    """One key of ``expect:``: an integer in [minimum, maximum], and the
    key it needs beside it, if any."""

    name: str
    minimum: int
    maximum: int
    needs: str | None = None
    why_needed: str = ""  # why ``needs`` must be given too


def parse_expect(value: Any, where: Where, keys: Sequence[ExpectKey]) -> dict[str, int]:
    """The variant's expectations, each checked against its key."""
    if value is None:
        return {}
    known = {k.name: k for k in keys}
    if not isinstance(value, dict):
        raise where.error(f"expected a mapping of {', '.join(known) or 'expectations'}")
    found: dict[str, int] = {}
    for name, raw in value.items():
        key = known.get(str(name))
        if key is None:
            raise where.child(str(name)).error(
                f"unknown key (expected one of: {', '.join(sorted(known)) or 'none'})"
            )
        if raw is not None:
            found[key.name] = Param("int", minimum=key.minimum, maximum=key.maximum).convert(
                raw, where.child(key.name)
            )
    for name in found:
        key = known[name]
        if key.needs is not None and key.needs not in found:
            raise where.child(name).error(f"needs {key.needs} beside it ({key.why_needed})")
    return found
