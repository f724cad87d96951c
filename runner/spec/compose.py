"""``extends:``: a spec that states only what differs from another.

    # configs/tortoise.yaml
    extends: tortoise-small.yaml     # a path from this file's folder
    name: tortoise
    duration: {measure: 60 min}      # the rest of duration is tortoise-small's
    hypotheses:
      low-limit-slows-web: {exploratory: null}   # a key deleted

The spec is the base's data merged with this file's (``extends`` itself
left out), by one rule: two mappings merge key by key, recursively; any
other value (a list, a string, a number) given here replaces the base's;
``null`` deletes the base's key (where the base has none it stays a null,
which some keys accept as "nothing"). Keys the base has keep their places;
a key only this file has goes right after the key this file gives before
it, or first if it gives none before it, so that order-bearing mappings (a
matrix's levels, the hypotheses) can be extended in the middle. A base may
extend another; a cycle is an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.errors import SpecError
from runner.spec.read import read_spec_yaml

EXTENDS = "extends"


def resolve_extends(data: Any, path: str, chain: tuple[str, ...] = ()) -> Any:
    """``data`` (read from ``path``) merged over the spec it extends, and
    that one over its own base; data without ``extends`` as it is."""
    if not isinstance(data, dict) or EXTENDS not in data:
        return data
    given = data[EXTENDS]
    if not isinstance(given, str) or not given.strip():
        raise SpecError(path, EXTENDS, f"expected the path of a spec file, got {given!r}")
    base_path = Path(path).parent / given
    shown = str(base_path)
    seen = (*chain, str(Path(path).resolve()))
    if str(base_path.resolve()) in seen:
        names = " -> ".join(Path(p).name for p in (*seen, str(base_path)))
        raise SpecError(path, EXTENDS, f"expected no cycle of extends, got {names}")
    if not base_path.is_file():
        raise SpecError(path, EXTENDS, f"no such spec file {shown} (a path from {path}'s folder)")
    base = resolve_extends(read_spec_yaml(base_path), shown, seen)
    if not isinstance(base, dict):
        raise SpecError(shown, "(file)", "expected a mapping of a spec's keys")
    own = {k: v for k, v in data.items() if k != EXTENDS}
    return merge(base, own)


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged onto ``base`` by the module's rule (neither is changed)."""
    order = list(base)
    anchor = -1  # where the last key ``over`` gives sits in ``order``
    for key in over:
        if key in base:
            anchor = order.index(key)
        else:
            anchor += 1
            order.insert(anchor, key)
    merged: dict[str, Any] = {}
    for key in order:
        if key not in over:
            merged[key] = base[key]
        elif over[key] is None and key in base:
            continue  # deleted
        elif isinstance(over[key], dict) and isinstance(base.get(key), dict):
            merged[key] = merge(base[key], over[key])
        else:
            merged[key] = over[key]
    return merged
